package ledger

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	bolt "go.etcd.io/bbolt"
)

// An import transaction writes at most importBatch entries, and is
// committed early once the entries and blobs it holds reach
// importBatchBytes: bbolt keeps every value put until the commit, so this
// bounds the memory of the write pass whatever the export holds.
const (
	importBatch      = 16384
	importBatchBytes = 64 << 20
)

// writeImported is the second pass of Import: the stream has verified, so
// write it into a temporary bbolt file, re-checking the chain as it goes
// (the file could have changed since the first pass), fsync once, and
// rename it into place. The temporary file is removed on every failure,
// and when ctx is cancelled (the command's SIGINT or SIGTERM).
func writeImported(ctx context.Context, src, dst string, rep *Report, progress func(done, total uint64)) (err error) {
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".opx-import-*.db")
	if err != nil {
		return err
	}
	tmpPath := tmp.Name()
	tmp.Close()
	os.Remove(tmpPath) // bbolt creates it
	renamed := false
	defer func() {
		if !renamed { // every failure, a panic included
			os.Remove(tmpPath)
		}
	}()
	db, err := bolt.Open(tmpPath, 0o600, &bolt.Options{NoSync: true, FreelistType: bolt.FreelistMapType})
	if err != nil {
		return err
	}
	closed := false
	defer func() {
		if !closed {
			db.Close()
		}
	}()
	if err := sniffExport(src); err != nil {
		return err
	}
	er, err := openExport(src)
	if err != nil {
		return err
	}
	defer er.Close()
	blobs := DirBlobSource(BundlePath(src))
	dec := newBlobDecoder()
	defer dec.Close()

	if err := db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketEntries, bucketMeta, bucketBlobs, bucketTree} {
			if _, err := tx.CreateBucket(b); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return err
	}

	var seq uint64
	prev := ZeroHash
	var ledgerID string
	tree := treeFactory.NewEmptyRange(0) // the tree is built as the entries go in
	var tw tileWriter                    // carries the level-0 edge across batches
	for done := false; !done; {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("interrupted: %w", err)
		}
		err := db.Update(func(tx *bolt.Tx) error {
			entries := tx.Bucket(bucketEntries)
			entries.FillPercent = 1.0
			bb := tx.Bucket(bucketBlobs)
			var size int
			var lh leafHasher
			for n := 0; n < importBatch && size < importBatchBytes; n++ {
				ln, err := er.next()
				if err == io.EOF {
					done = true
					break // still report progress for the last batch
				}
				if err != nil || ln.bad != "" {
					return fmt.Errorf("entry %d changed since it was verified: %v%s", seq, err, ln.bad)
				}
				line := ln.raw
				e, err := ParseEntry(line)
				if err != nil || e.Seq != seq || e.Prev != prev {
					return fmt.Errorf("entry %d changed since it was verified", seq)
				}
				if seq == 0 {
					if ledgerID, err = parseGenesisID(e.Data); err != nil {
						return err
					}
				}
				if err := entries.Put(seqKey(seq), line); err != nil {
					return err
				}
				leaf := lh.sum(line)
				if err := tree.Append(leaf[:], tw.visit); err != nil {
					return err
				}
				size += len(line)
				refs, _ := BlobRefs(e.Data)
				for _, h := range refs {
					if bb.Get(h[:]) != nil {
						continue
					}
					zst, err := readBlobFrame(blobs, h)
					if errors.Is(err, ErrNotFound) {
						continue // pruned before export (verify accepted it)
					}
					if err != nil {
						return err
					}
					if f := checkBlobFrame(dec, h, bytes.NewReader(zst)); f != nil {
						f.Seq = seq
						return fmt.Errorf("changed since it was verified: %w", f)
					}
					if err := bb.Put(h[:], zst); err != nil {
						return err
					}
					size += len(zst)
				}
				prev = Sum(line)
				seq++
			}
			if progress != nil {
				progress(seq, rep.Entries)
			}
			return tw.flush(tx.Bucket(bucketTree))
		})
		if err != nil {
			return err
		}
	}
	if seq == 0 || seq-1 != rep.HeadSeq || prev.String() != rep.HeadHash {
		return fmt.Errorf("stream changed since it was verified (head %d %s)", seq-1, prev)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		if err := meta.Put(metaFormat, []byte(Format)); err != nil {
			return err
		}
		if err := meta.Put(metaLedgerID, []byte(ledgerID)); err != nil {
			return err
		}
		if err := meta.Put(metaTree, []byte(TreeLayout)); err != nil {
			return err
		}
		return putHead(meta, seq-1, prev)
	}); err != nil {
		return err
	}
	if err := db.Sync(); err != nil {
		return err
	}
	closed = true
	if err := db.Close(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("interrupted: %w", err)
	}
	if _, err := os.Lstat(dst); err == nil {
		return fmt.Errorf("%s: %w", dst, ErrExists)
	}
	if err := os.Rename(tmpPath, dst); err != nil {
		return err
	}
	renamed = true
	return syncDir(filepath.Dir(dst))
}

// readBlobFrame reads a blob's whole frame (bounded by maxBlobFrame) to
// store it.
func readBlobFrame(src BlobSource, h Hash) ([]byte, error) {
	rc, err := src(h)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, maxBlobFrame+1))
	if err != nil {
		return nil, fmt.Errorf("blob %s: %w", h, err)
	}
	if len(b) > maxBlobFrame {
		return nil, fmt.Errorf("blob %s: frame larger than %d bytes", h, int64(maxBlobFrame))
	}
	return b, nil
}
