package ledger

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"
)

// ExportSourceFile is ExportFile over a Source: the same files, byte for
// byte, as ExportFile writes for the same head, checked the same way.
func ExportSourceFile(src Source, path string, opts ExportOptions) (*Manifest, error) {
	return exportFile(path, func(w io.Writer, blobs BlobSink) (*Manifest, error) { return ExportSource(src, w, blobs, opts) })
}

// ExportSource is Export over a Source, up to the head the source names.
// It reads the entries once (twice with a session: once to find the
// session's span) and holds at most one chunk of entries and one blob
// frame (MaxBlobFrame) at a time.
func ExportSource(src Source, w io.Writer, blobs BlobSink, opts ExportOptions) (*Manifest, error) {
	head, err := src.Head()
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	m := &Manifest{Format: Format, LedgerID: head.LedgerID, Session: opts.Session, HeadSeq: head.Seq, HeadHash: head.Hash.String(), ToSeq: head.Seq}
	if opts.Session != "" {
		if m.FromSeq, m.ToSeq, err = sessionSpanIn(src.Entries, opts.Session, head.Seq); err != nil {
			return nil, err
		}
	}
	err = exportSource(src, head, m, w, blobs, opts)
	if ps, ok := src.(proofSource); ok && err == nil {
		err = ps.addProofs(m)
	} else if err == nil {
		err = addSourceProofs(src, head, m)
	}
	if err != nil {
		var ie *IntegrityError
		if errors.As(err, &ie) {
			return nil, fmt.Errorf("export refused, ledger is damaged: %w", err)
		}
		return nil, fmt.Errorf("export: %w", err)
	}
	return m, nil
}

// proofSource is a Source that gives an export the tree's proof
// material (Manifest.TreeRange, Checkpoint, VerifierKey, Proofs) from its
// stored tiles, as Export does: a ledger file's. For any other source (a
// running engine's) addSourceProofs computes the same from the entries.
type proofSource interface {
	addProofs(m *Manifest) error
}

func (s localSource) addProofs(m *Manifest) error { return s.l.addProofs(m) }

func exportSource(src Source, head Head, m *Manifest, w io.Writer, blobs BlobSink, opts ExportOptions) error {
	total := m.ToSeq - m.FromSeq + 1
	prev := ZeroHash
	if m.FromSeq > 0 {
		found := false
		if err := src.Entries(m.FromSeq-1, m.FromSeq-1, func(_ uint64, raw []byte) error {
			prev, found = Sum(raw), true
			return nil
		}); err != nil {
			return err
		}
		if !found {
			return &IntegrityError{Seq: m.FromSeq - 1, Kind: KindGap, Detail: "entry before the segment is missing"}
		}
	}
	m.Prev = prev.String()
	chk := newChecker(VerifyOptions{Progress: opts.Progress}, false, total, m.FromSeq, &prev)
	chk.budget = newByteBudget(streamInflight)
	items := make([]item, 0, chunkSize)
	idx, size := 0, 0
	want := m.FromSeq
	var last []byte
	err := src.Entries(m.FromSeq, m.ToSeq, func(seq uint64, raw []byte) error {
		if seq != want {
			return &IntegrityError{Seq: want, Kind: KindGap, Detail: fmt.Sprintf("expected entry %d, found key %x", want, seqKey(seq))}
		}
		if _, err := w.Write(raw); err != nil {
			return err
		}
		if _, err := w.Write([]byte{'\n'}); err != nil {
			return err
		}
		items = append(items, item{key: seq, raw: raw})
		size += len(raw)
		if len(items) == chunkSize || size >= streamChunkBytes {
			chk.submit(chunk{idx: idx, items: items})
			idx, size = idx+1, 0
			items = make([]item, 0, chunkSize)
		}
		last = raw
		m.Entries++
		want++
		return nil
	})
	if err == nil && len(items) > 0 {
		chk.submit(chunk{idx: idx, items: items})
	}
	rep, refs, _ := chk.finish()
	if err != nil {
		return err
	}
	if want <= m.ToSeq {
		return &IntegrityError{Seq: want, Kind: KindGap, Detail: "ledger ends before its head"}
	}
	if m.ToSeq == head.Seq && Sum(last) != head.Hash {
		return &IntegrityError{Seq: head.Seq, Kind: KindHeadMismatch, Detail: fmt.Sprintf("meta head %d %s does not name the last entry", head.Seq, head.Hash)}
	}
	if rep.finish(); len(rep.Failures) > 0 {
		return rep.Failures[0]
	}
	refOrder := make([]Hash, 0, len(refs))
	for h := range refs {
		refOrder = append(refOrder, h)
	}
	sort.Slice(refOrder, func(i, j int) bool {
		a, b := refs[refOrder[i]], refs[refOrder[j]]
		return a < b || (a == b && bytes.Compare(refOrder[i][:], refOrder[j][:]) < 0)
	})
	lastHash, _ := ParseHash(rep.HeadHash)
	m.LastHash = lastHash.String()
	if blobs == nil {
		return nil
	}
	dec := newBlobDecoder()
	defer dec.Close()
	var pruned map[Hash]bool // loaded at the first absent blob
	for _, h := range refOrder {
		zst, err := readFrame(src, h)
		if errors.Is(err, ErrNotFound) {
			if pruned == nil {
				if pruned, err = sourcePruned(src, head.Seq); err != nil {
					return err
				}
			}
			if pruned[h] {
				continue
			}
			if later, err := prunedSince(src, head); err == nil && later[h] {
				return fmt.Errorf("blob %s (named by entry %d) was pruned while exporting; export again", h, refs[h])
			}
			return &IntegrityError{Seq: refs[h], Kind: KindMissingBlob, Detail: fmt.Sprintf("blob %s named by entry %d is not stored", h, refs[h])}
		}
		if err != nil {
			return err
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
	if opts.Progress != nil {
		opts.Progress(total, total)
	}
	return nil
}

// readFrame reads a blob's whole stored frame from src, refusing one over
// MaxBlobFrame.
func readFrame(src Source, h Hash) ([]byte, error) {
	rc, err := src.Blob(h)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	zst, err := io.ReadAll(io.LimitReader(rc, MaxBlobFrame+1))
	if err != nil {
		return nil, err
	}
	if len(zst) > MaxBlobFrame {
		return nil, fmt.Errorf("blob %s: frame larger than any blob frame (%d bytes)", h, int64(MaxBlobFrame))
	}
	return zst, nil
}

// sourcePruned is prunedIn over a Source, up to head.
func sourcePruned(src Source, head uint64) (map[Hash]bool, error) {
	out := map[Hash]bool{}
	err := src.Entries(0, head, func(_ uint64, raw []byte) error {
		addPruned(out, raw)
		return nil
	})
	return out, err
}
