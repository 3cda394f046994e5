package ledger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// maxManifestSize bounds the manifest file: a few hundred bytes in
// practice.
const maxManifestSize = 1 << 20

// ReadManifest reads the manifest in an export's blobs bundle. It returns
// (nil, nil) when the export has no bundle or no manifest.
func ReadManifest(exportPath string) (*Manifest, error) {
	path := filepath.Join(BundlePath(exportPath), ManifestName)
	f, err := openRegular(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxManifestSize+1))
	if err != nil {
		return nil, fmt.Errorf("manifest %s: %w", path, err)
	}
	if len(b) > maxManifestSize {
		return nil, fmt.Errorf("manifest %s is larger than %d bytes: not a manifest opx wrote", path, maxManifestSize)
	}
	var m Manifest
	if err := unmarshalStrict(b, &m); err != nil {
		return nil, fmt.Errorf("manifest %s: %w", filepath.Join(BundlePath(exportPath), ManifestName), err)
	}
	if m.Format != Format {
		return nil, fmt.Errorf("manifest: %w %q", ErrFormat, m.Format)
	}
	return &m, nil
}

// VerifyExport verifies an export file (full or session segment) on its
// own, with the blobs in its bundle and, when present, its manifest: the
// first entry's prev and the last entry's seq and hash must match it, so
// a tail cut at a line boundary is caught too. It returns the report and
// the manifest (nil when there is none).
func VerifyExport(path string, opts VerifyOptions) (*Report, *Manifest, error) {
	return verifyExport(context.Background(), path, opts)
}

// verifyExport is VerifyExport, stopped with an error when ctx (if not
// nil) is cancelled.
func verifyExport(ctx context.Context, path string, opts VerifyOptions) (*Report, *Manifest, error) {
	m, err := ReadManifest(path)
	if err != nil {
		return nil, nil, err
	}
	if m == nil { // a manifest says it is an export, whatever its lines
		if err := sniffExport(path); err != nil {
			return nil, nil, fmt.Errorf("verify %s: %w", path, err)
		}
	}
	er, err := openExport(path)
	if err != nil {
		return nil, nil, fmt.Errorf("verify %s: %w", path, err)
	}
	defer er.Close()
	er.ctx = ctx
	rep, err := verifyLines(er, m, DirBlobSource(BundlePath(path)), opts)
	if err != nil {
		return nil, m, fmt.Errorf("verify %s: %w", path, err)
	}
	return rep, m, nil
}

// VerifyStream verifies a JSONL stream (plain, or zstd told apart by its
// magic number). Without a manifest the stream must start at genesis (seq
// 0, prev zeros); with one it must match the manifest's boundaries. Every
// line must end in "\n"; every byte is accounted for. Strictness follows
// opts.
func VerifyStream(r io.Reader, m *Manifest, blobs BlobSource, opts VerifyOptions) (*Report, error) {
	er, err := newExportReader(r)
	if err != nil {
		return nil, err
	}
	defer er.Close()
	return verifyLines(er, m, blobs, opts)
}

func verifyLines(er *exportReader, m *Manifest, blobs BlobSource, opts VerifyOptions) (*Report, error) {
	from, prev := uint64(0), ZeroHash
	total := uint64(0)
	if m != nil {
		from, total = m.FromSeq, m.Entries
		var err error
		if prev, err = ParseHash(m.Prev); err != nil {
			return nil, fmt.Errorf("manifest prev: %w", err)
		}
		if opts.TreeRange == nil && m.TreeRange != "" {
			if opts.TreeRange, err = decodeTreeRange(m.TreeRange); err != nil {
				return nil, fmt.Errorf("manifest tree_range: %w", err)
			}
		}
	}
	keep := m.wantedEntries()
	c := newChecker(opts, true, total, from, &prev)
	readErr := feedStream(er, from, c, keep)
	rep, refs, pruned := c.finish()
	proved, fails := checkManifestProofs(m, keep, opts.CheckpointKey)
	for _, f := range fails {
		rep.add(f)
	}
	rep.Proved = proved
	if er.ctx != nil && er.ctx.Err() != nil {
		return nil, er.err
	}
	if readErr != nil {
		rep.add(readErr)
	}
	if m != nil && rep.Entries > 0 && (rep.HeadSeq != m.ToSeq || rep.HeadHash != m.LastHash) {
		rep.add(&IntegrityError{Seq: rep.HeadSeq, Kind: KindHeadMismatch,
			Detail:   fmt.Sprintf("manifest says the export ends at %d %s, the stream ends at %d %s", m.ToSeq, m.LastHash, rep.HeadSeq, rep.HeadHash),
			Expected: m.LastHash, Found: rep.HeadHash})
	}
	if rep.Entries == 0 {
		rep.add(&IntegrityError{Seq: from, Kind: KindUnreadable, Detail: "stream holds no entries"})
	}
	if blobs == nil {
		blobs = func(h Hash) (io.ReadCloser, error) { return nil, fmt.Errorf("blob %s: %w", h, ErrNotFound) }
	}
	for _, f := range checkBlobs(opts.Workers, refs, pruned, blobs) {
		rep.add(f)
	}
	rep.finish()
	return rep, nil
}

// feedStream hands the export's lines to the checker in chunks of at most
// chunkSize lines and about streamChunkBytes bytes, and copies into keep
// the line at each position keep names (at most maxManifestProofs). A line that cannot be
// an entry (too long, no final newline, empty, a carriage return or a NUL)
// is passed on marked bad, so it is reported where it is; an error that
// stops the reading is returned as a failure at the next position.
func feedStream(er *exportReader, from uint64, c *checker, keep map[uint64][]byte) *IntegrityError {
	idx := 0
	pos := from
	var size int
	items := make([]item, 0, chunkSize)
	flush := func() {
		if len(items) > 0 {
			c.submit(chunk{idx: idx, items: items})
			idx++
			items = make([]item, 0, chunkSize)
			size = 0
		}
	}
	defer flush()
	for {
		ln, err := er.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return &IntegrityError{Seq: pos, Kind: KindUnreadable, Detail: err.Error()}
		}
		it := item{key: pos, raw: ln.raw, bad: ln.bad, line: ln.number}
		if _, ok := keep[pos]; ok && ln.bad == "" {
			keep[pos] = append([]byte(nil), ln.raw...)
		}
		items = append(items, it)
		size += len(ln.raw)
		pos++
		if len(items) == chunkSize || size >= streamChunkBytes {
			flush()
		}
	}
}

// ImportOptions tune Import.
type ImportOptions struct {
	// Verify tunes the first pass; Strict is always on.
	Verify VerifyOptions
	// Progress, if set, is called during the second pass (writing) with
	// entries written and the total.
	Progress func(done, total uint64)
	// Context, if set, interrupts the import when cancelled: nothing is
	// written and the temporary file is removed.
	Context context.Context
}

// Import reads an export (.jsonl or .jsonl.zst, with its blobs bundle),
// verifies all of it strictly, and only then writes a new ledger at dst
// (which must not exist), through a temporary file renamed into place.
// A stream that fails verification is refused with the report and an
// error wrapping ErrIntegrity, and nothing is written. Segments (session
// exports) cannot become a ledger: a ledger starts at genesis.
func Import(src, dst string, opts ImportOptions) (*Report, error) {
	if _, err := os.Lstat(dst); err == nil {
		return nil, fmt.Errorf("import: %s: %w", dst, ErrExists)
	}
	opts.Verify.Strict = true
	ctx := opts.Context
	if ctx == nil {
		ctx = context.Background()
	}
	rep, m, err := verifyExport(ctx, src, opts.Verify)
	if err != nil {
		return nil, fmt.Errorf("import: %w", err)
	}
	if m != nil && m.FromSeq != 0 {
		return rep, fmt.Errorf("import: %s is a segment (entries %d..%d of session %q); only a full export can become a ledger; use opx ledger verify on it", src, m.FromSeq, m.ToSeq, m.Session)
	}
	if err := rep.Err(); err != nil {
		return rep, fmt.Errorf("import refused: %w", err)
	}
	if err := writeImported(ctx, src, dst, rep, opts.Progress); err != nil {
		return rep, fmt.Errorf("import: %w", err)
	}
	return rep, nil
}

// parseGenesisID returns the ledger_id from a genesis entry's data.
func parseGenesisID(data []byte) (string, error) {
	var g struct {
		LedgerID string `json:"ledger_id"`
	}
	if err := json.Unmarshal(data, &g); err != nil || len(g.LedgerID) != 32 {
		return "", fmt.Errorf("genesis has no valid ledger_id")
	}
	return g.LedgerID, nil
}
