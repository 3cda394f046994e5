package ledger

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/klauspost/compress/zstd"
)

// MaxLineSize bounds one JSONL line (one entry). Entries inline only small
// payloads; anything large is a blob, so a longer line is hostile or broken.
const MaxLineSize = 16 << 20

var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// openStream opens a .jsonl or .jsonl.zst file, telling them apart by the
// zstd magic number rather than the name.
func openStream(path string) (io.Reader, func(), error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	br := bufio.NewReaderSize(f, 1<<20)
	magic, _ := br.Peek(4)
	if bytes.Equal(magic, zstdMagic) {
		zr, err := zstd.NewReader(br, zstd.WithDecoderMaxMemory(1<<30))
		if err != nil {
			f.Close()
			return nil, nil, err
		}
		return zr, func() { zr.Close(); f.Close() }, nil
	}
	return br, func() { f.Close() }, nil
}

// ReadManifest reads the manifest in an export's blobs bundle. It returns
// (nil, nil) when the export has no bundle or no manifest.
func ReadManifest(exportPath string) (*Manifest, error) {
	b, err := os.ReadFile(filepath.Join(BundlePath(exportPath), ManifestName))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
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
	m, err := ReadManifest(path)
	if err != nil {
		return nil, nil, err
	}
	r, closeFn, err := openStream(path)
	if err != nil {
		return nil, nil, fmt.Errorf("verify %s: %w", path, err)
	}
	defer closeFn()
	rep, err := VerifyStream(r, m, DirBlobSource(BundlePath(path)), opts)
	if err != nil {
		return nil, m, fmt.Errorf("verify %s: %w", path, err)
	}
	return rep, m, nil
}

// BlobSource returns a stored zstd frame by hash, or nil when absent.
type BlobSource func(Hash) []byte

// DirBlobSource reads blobs from an export bundle directory.
func DirBlobSource(dir string) BlobSource {
	return func(h Hash) []byte {
		b, err := os.ReadFile(filepath.Join(dir, h.String()+".zst"))
		if err != nil {
			return nil
		}
		return b
	}
}

// VerifyStream verifies a JSONL stream. Without a manifest the stream must
// start at genesis (seq 0, prev zeros); with one it must match the
// manifest's boundaries. Every line must end in "\n". Strictness follows
// opts.
func VerifyStream(r io.Reader, m *Manifest, blobs BlobSource, opts VerifyOptions) (*Report, error) {
	from, prev := uint64(0), ZeroHash
	total := uint64(0)
	if m != nil {
		from, total = m.FromSeq, m.Entries
		var err error
		if prev, err = ParseHash(m.Prev); err != nil {
			return nil, fmt.Errorf("manifest prev: %w", err)
		}
	}
	c := newChecker(opts, true, total)
	readErr := feedStream(r, from, c)
	rep, refs, pruned := c.finish(from, &prev)
	if readErr != nil {
		rep.Failures = append(rep.Failures, readErr)
	}
	if m != nil && rep.Entries > 0 && (rep.HeadSeq != m.ToSeq || rep.HeadHash != m.LastHash) {
		rep.Failures = append(rep.Failures, &IntegrityError{Seq: rep.HeadSeq, Kind: KindHeadMismatch,
			Detail:   fmt.Sprintf("manifest says the export ends at %d %s, the stream ends at %d %s", m.ToSeq, m.LastHash, rep.HeadSeq, rep.HeadHash),
			Expected: m.LastHash, Found: rep.HeadHash})
	}
	if rep.Entries == 0 {
		rep.Failures = append(rep.Failures, &IntegrityError{Seq: from, Kind: KindUnreadable, Detail: "stream holds no entries"})
	}
	if blobs == nil {
		blobs = func(Hash) []byte { return nil }
	}
	rep.Failures = append(rep.Failures, checkBlobs(opts.Workers, refs, pruned, blobs)...)
	rep.finish()
	return rep, nil
}

// feedStream splits the stream into lines and hands chunks to the
// checker. A line without its "\n" (a cut tail) or over MaxLineSize is
// passed on marked bad, so it is reported where it is.
func feedStream(r io.Reader, from uint64, c *checker) *IntegrityError {
	br := bufio.NewReaderSize(r, 1<<20)
	idx := 0
	pos := from
	items := make([]item, 0, chunkSize)
	flush := func() {
		if len(items) > 0 {
			c.submit(chunk{idx: idx, items: items})
			idx++
			items = make([]item, 0, chunkSize)
		}
	}
	defer flush()
	for {
		line, err := readLine(br)
		if len(line) > 0 || (err == nil) {
			it := item{key: pos, raw: line}
			switch {
			case errors.Is(err, errLineTooLong):
				it.bad = fmt.Sprintf("line longer than %d bytes", MaxLineSize)
			case err == io.EOF:
				it.bad = "last line has no newline (truncated stream?)"
			case len(line) == 0:
				it.bad = "empty line"
			}
			items = append(items, it)
			pos++
			if len(items) == chunkSize {
				flush()
			}
		}
		switch {
		case err == nil, errors.Is(err, errLineTooLong):
			continue
		case err == io.EOF:
			return nil
		default:
			return &IntegrityError{Seq: pos, Kind: KindUnreadable, Detail: "reading stream: " + err.Error()}
		}
	}
}

var errLineTooLong = errors.New("line too long")

// readLine returns the next line without its "\n". At the end it returns
// io.EOF, with any bytes of a final line that lacked its newline. A line
// over MaxLineSize is skipped to its end and reported as errLineTooLong.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		frag, err := br.ReadSlice('\n')
		if len(line)+len(frag) > MaxLineSize {
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
			if err != nil && err != io.EOF {
				return nil, err
			}
			return []byte{}, errLineTooLong
		}
		line = append(line, frag...)
		switch {
		case err == nil:
			return line[:len(line)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return line, err
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
	rep, m, err := VerifyExport(src, opts.Verify)
	if err != nil {
		return nil, fmt.Errorf("import: %w", err)
	}
	if m != nil && m.FromSeq != 0 {
		return rep, fmt.Errorf("import: %s is a segment (entries %d..%d of session %q); only a full export can become a ledger; use opx ledger verify on it", src, m.FromSeq, m.ToSeq, m.Session)
	}
	if err := rep.Err(); err != nil {
		return rep, fmt.Errorf("import refused: %w", err)
	}
	if err := writeImported(src, dst, rep, opts.Progress); err != nil {
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
