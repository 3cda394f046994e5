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
	"runtime"
	"sort"
	"strings"

	"github.com/klauspost/compress/zstd"
	bolt "go.etcd.io/bbolt"
)

// ManifestName is the file inside a blobs bundle that describes the export.
const ManifestName = "manifest.json"

// Manifest describes an export: which ledger, which seq range and the
// hashes at its boundaries. A full export runs from seq 0 with prev 64
// zeros. A session export is a verifiable segment: every entry from the
// session's first to its last, verbatim and contiguous (entries of other
// sessions in between are included, since the chain runs through them),
// with Prev naming the hash of the entry before the segment. Anyone
// holding the full ledger, or its head from elsewhere, can tie the
// segment to it: hash(entry FromSeq-1) == Prev.
type Manifest struct {
	Format   string `json:"format"`
	LedgerID string `json:"ledger_id"`
	Session  string `json:"session,omitempty"`
	FromSeq  uint64 `json:"from_seq"`
	ToSeq    uint64 `json:"to_seq"`
	Entries  uint64 `json:"entries"`
	Prev     string `json:"prev"`
	LastHash string `json:"last_hash"`
	HeadSeq  uint64 `json:"head_seq"`
	HeadHash string `json:"head_hash"`
	Blobs    int    `json:"blobs"`
	// TreeRange is the compact range [0,FromSeq) of the ledger's Merkle
	// tree (Ledger.RangeHashesAt): its hashes left to right, concatenated,
	// in standard base64 (EncodeTreeRange), so that a segment's verifier
	// can compute the tree from FromSeq on and check the roots its
	// checkpoints record. Absent in a full export.
	TreeRange string `json:"tree_range,omitempty"`

	// The tree's proof material (absent from exports of ledgers that
	// sign no checkpoints, and from older exports, which verify as
	// before). Checkpoint is the ledger's latest signed checkpoint note
	// covering the export's first entry, VerifierKey the key recorded
	// before it (an investigator should pin one from elsewhere: opx
	// ledger verify --key), and Proofs the inclusion proofs of the first exported
	// entry and of the last one the checkpoint covers: with the chain
	// between them, they prove every exported entry up to there to be
	// in the signed tree, that is, in its place in the full ledger.
	Checkpoint  string          `json:"checkpoint,omitempty"`
	VerifierKey string          `json:"verifier_key,omitempty"`
	Proofs      []ManifestProof `json:"proofs,omitempty"`
}

// ExportOptions select what Export writes.
type ExportOptions struct {
	// Session, if set, exports the segment covering that session.
	Session string
	// Progress, if set, is called with entries written and the total.
	Progress func(done, total uint64)
}

// BundlePath returns the blobs bundle directory of an export file:
// "x.jsonl.zst" and "x.jsonl" both give "x.blobs".
func BundlePath(exportPath string) string {
	base := strings.TrimSuffix(exportPath, ".zst")
	base = strings.TrimSuffix(base, ".jsonl")
	return base + ".blobs"
}

// ExportFile writes the ledger (or one session's segment) to path as
// JSONL, zstd-compressed when path ends in ".zst", and its blobs and
// manifest to BundlePath(path). Existing files are never overwritten. The
// chain is re-checked while exporting (every entry hashed, every blob
// hash-checked): a broken ledger is not exported.
func (l *Ledger) ExportFile(path string, opts ExportOptions) (*Manifest, error) {
	return exportFile(path, func(w io.Writer, blobs BlobSink) (*Manifest, error) { return l.Export(w, blobs, opts) })
}

// exportFile writes an export to path and its bundle (temporary files,
// then renamed into place): export writes the JSONL stream and the blobs.
func exportFile(path string, export func(io.Writer, BlobSink) (*Manifest, error)) (*Manifest, error) {
	bundle := BundlePath(path)
	for _, p := range []string{path, bundle} {
		if _, err := os.Lstat(p); err == nil {
			return nil, fmt.Errorf("export: %s already exists", p)
		}
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, ".opx-export-*")
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	tmpBundle, err := os.MkdirTemp(dir, ".opx-export-blobs-*")
	if err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return nil, fmt.Errorf("export: %w", err)
	}
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(tmp.Name())
			os.RemoveAll(tmpBundle)
		}
	}()
	bw := bufio.NewWriterSize(tmp, 1<<20)
	var w io.Writer = bw
	var zw *zstd.Encoder
	if strings.HasSuffix(path, ".zst") {
		zw, err = zstd.NewWriter(bw, zstd.WithEncoderLevel(zstd.SpeedFastest),
			zstd.WithEncoderConcurrency(runtime.GOMAXPROCS(0)), zstd.WithEncoderCRC(true))
		if err != nil {
			return nil, fmt.Errorf("export: %w", err)
		}
		w = zw
	}
	m, err := export(w, dirBlobSink(tmpBundle))
	if err != nil {
		return nil, err
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			return nil, fmt.Errorf("export: %w", err)
		}
	}
	mj, _ := json.MarshalIndent(m, "", "  ")
	if err := writeFileSync(filepath.Join(tmpBundle, ManifestName), append(mj, '\n')); err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	if err := os.Chmod(tmp.Name(), 0o600); err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	if err := os.Rename(tmpBundle, bundle); err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.RemoveAll(bundle)
		return nil, fmt.Errorf("export: %w", err)
	}
	ok = true
	return m, syncDir(dir)
}

// BlobSink receives exported blobs: the stored zstd frame, already checked
// against its hash.
type BlobSink func(h Hash, zst []byte) error

func dirBlobSink(dir string) BlobSink {
	return func(h Hash, zst []byte) error {
		return os.WriteFile(filepath.Join(dir, h.String()+".zst"), zst, 0o600)
	}
}

// Export writes the JSONL stream to w (one stored entry per line, verbatim,
// each ending in "\n") and each named blob to blobs (may be nil). It
// checks the chain as it goes and stops with an ErrIntegrity error at the
// first broken link rather than write an export that would not verify.
func (l *Ledger) Export(w io.Writer, blobs BlobSink, opts ExportOptions) (*Manifest, error) {
	head, err := l.Head()
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	m := &Manifest{Format: Format, LedgerID: l.id, Session: opts.Session, HeadSeq: head.Seq, HeadHash: head.Hash.String(), ToSeq: head.Seq}
	if opts.Session != "" {
		if m.FromSeq, m.ToSeq, err = l.sessionSpan(opts.Session, head.Seq); err != nil {
			return nil, err
		}
	}
	total := m.ToSeq - m.FromSeq + 1
	var refOrder []Hash
	err = l.view(func(tx *bolt.Tx) error {
		entries := tx.Bucket(bucketEntries)
		// The head must name the last entry (read again here: appends may
		// have committed since Head), else the export would silently end
		// early or carry a manifest head the ledger does not have.
		now, err := readHead(tx.Bucket(bucketMeta))
		if err != nil {
			return err
		}
		k, v := entries.Cursor().Last()
		if k == nil || len(k) != 8 || beUint64(k) != now.Seq || Sum(v) != now.Hash || Sum(entries.Get(seqKey(head.Seq))) != head.Hash {
			return &IntegrityError{Seq: now.Seq, Kind: KindHeadMismatch, Detail: fmt.Sprintf("meta head %d %s does not name the last entry", now.Seq, now.Hash)}
		}
		prev := ZeroHash
		if m.FromSeq > 0 {
			v := entries.Get(seqKey(m.FromSeq - 1))
			if v == nil {
				return &IntegrityError{Seq: m.FromSeq - 1, Kind: KindGap, Detail: "entry before the segment is missing"}
			}
			prev = Sum(v)
		}
		m.Prev = prev.String()
		// The loop only copies bytes to w; parsing, hashing and the
		// chain check run on all cores in the verifier's checker, and
		// the export is refused (its temporary file dropped) if it
		// finds anything.
		chk := newChecker(VerifyOptions{Progress: opts.Progress}, false, total, m.FromSeq, &prev)
		items := make([]item, 0, chunkSize)
		idx := 0
		c := entries.Cursor()
		want := m.FromSeq
		for k, v := c.Seek(seqKey(m.FromSeq)); k != nil && want <= m.ToSeq; k, v = c.Next() {
			if len(k) != 8 || beUint64(k) != want {
				chk.finish()
				return &IntegrityError{Seq: want, Kind: KindGap, Detail: fmt.Sprintf("expected entry %d, found key %x", want, k)}
			}
			if _, err := w.Write(v); err != nil {
				chk.finish()
				return err
			}
			if _, err := w.Write([]byte{'\n'}); err != nil {
				chk.finish()
				return err
			}
			items = append(items, item{key: want, raw: v})
			if len(items) == chunkSize {
				chk.submit(chunk{idx: idx, items: items})
				idx++
				items = make([]item, 0, chunkSize)
			}
			m.Entries++
			want++
		}
		if len(items) > 0 {
			chk.submit(chunk{idx: idx, items: items})
		}
		rep, refs, _ := chk.finish()
		if want <= m.ToSeq {
			return &IntegrityError{Seq: want, Kind: KindGap, Detail: "ledger ends before its head"}
		}
		if rep.finish(); len(rep.Failures) > 0 {
			return rep.Failures[0]
		}
		for h := range refs {
			refOrder = append(refOrder, h)
		}
		sort.Slice(refOrder, func(i, j int) bool {
			a, b := refs[refOrder[i]], refs[refOrder[j]]
			return a < b || (a == b && bytes.Compare(refOrder[i][:], refOrder[j][:]) < 0)
		})
		prev, _ = ParseHash(rep.HeadHash)
		m.LastHash = prev.String()
		if blobs == nil {
			return nil
		}
		bb := tx.Bucket(bucketBlobs)
		dec := newBlobDecoder()
		defer dec.Close()
		var pruned map[Hash]bool // loaded at the first absent blob
		for _, h := range refOrder {
			zst := bb.Get(h[:])
			if zst == nil {
				if pruned == nil {
					pruned = prunedIn(entries)
				}
				if pruned[h] {
					continue
				}
				return &IntegrityError{Seq: refs[h], Kind: KindMissingBlob, Detail: fmt.Sprintf("blob %s named by entry %d is not stored", h, refs[h])}
			}
			if f := checkBlobFrame(dec, h, bytes.NewReader(zst)); f != nil {
				f.Seq = refs[h]
				return f
			}
			if err := blobs(h, zst); err != nil {
				return err
			}
			m.Blobs++
		}
		return nil
	})
	if err != nil {
		var ie *IntegrityError
		if errors.As(err, &ie) {
			return nil, fmt.Errorf("export refused, ledger is damaged: %w", err)
		}
		return nil, fmt.Errorf("export: %w", err)
	}
	if err := l.addProofs(m); err != nil {
		var ie *IntegrityError
		if errors.As(err, &ie) {
			return nil, fmt.Errorf("export refused, ledger is damaged: %w", err)
		}
		return nil, fmt.Errorf("export: %w", err)
	}
	if opts.Progress != nil {
		opts.Progress(total, total)
	}
	return m, nil
}

// prunedIn returns every blob a chronicle.pruned entry anywhere in the
// ledger lists: those may be absent without the ledger being damaged.
func prunedIn(entries *bolt.Bucket) map[Hash]bool {
	out := map[Hash]bool{}
	c := entries.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		addPruned(out, v)
	}
	return out
}

// addPruned adds to out the blobs entry raw lists, if it is a
// chronicle.pruned entry.
func addPruned(out map[Hash]bool, raw []byte) {
	if !bytes.Contains(raw, []byte(TypePruned)) {
		return
	}
	if e, err := ParseEntry(raw); err == nil && e.Type == TypePruned {
		hs, _ := PrunedBlobs(e.Data)
		for _, h := range hs {
			out[h] = true
		}
	}
}

// sessionSpan finds the first and last seq of a session's entries.
func (l *Ledger) sessionSpan(session string, head uint64) (first, last uint64, err error) {
	return sessionSpanIn(l.RangeRaw, session, head)
}

// sessionSpanIn finds the first and last seq of a session's entries up
// to head, reading the stored entries with entries (a ledger's RangeRaw,
// a Source's Entries).
func sessionSpanIn(entries func(from, to uint64, fn func(seq uint64, raw []byte) error) error, session string, head uint64) (first, last uint64, err error) {
	found := false
	err = entries(0, head, func(seq uint64, raw []byte) error {
		e, err := ParseEntry(raw)
		if err != nil {
			return fmt.Errorf("entry %d: %w", seq, err)
		}
		if e.Session == session {
			if !found {
				first, found = seq, true
			}
			last = seq
		}
		return nil
	})
	if err == nil && !found {
		err = fmt.Errorf("export: session %q: %w", session, ErrNotFound)
	}
	return first, last, err
}

func writeFileSync(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
