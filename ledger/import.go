package ledger

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"

	bolt "go.etcd.io/bbolt"
)

// importBatch is how many entries one import transaction writes.
const importBatch = 16384

// writeImported is the second pass of Import: the stream has verified, so
// write it into a temporary bbolt file, re-checking the chain as it goes
// (the file could have changed since the first pass), fsync once, and
// rename it into place.
func writeImported(src, dst string, rep *Report, progress func(done, total uint64)) (err error) {
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
	defer func() {
		if err != nil {
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
	r, closeFn, err := openStream(src)
	if err != nil {
		return err
	}
	defer closeFn()
	blobs := DirBlobSource(BundlePath(src))

	if err := db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketEntries, bucketMeta, bucketBlobs} {
			if _, err := tx.CreateBucket(b); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return err
	}

	br := bufio.NewReaderSize(r, 1<<20)
	var seq uint64
	prev := ZeroHash
	var ledgerID string
	for done := false; !done; {
		err := db.Update(func(tx *bolt.Tx) error {
			entries := tx.Bucket(bucketEntries)
			entries.FillPercent = 1.0
			bb := tx.Bucket(bucketBlobs)
			for n := 0; n < importBatch; n++ {
				line, err := readLine(br)
				if err == io.EOF && len(line) == 0 {
					done = true
					break // still report progress for the last batch
				}
				if err != nil {
					return fmt.Errorf("entry %d changed since it was verified: %v", seq, err)
				}
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
				refs, _ := BlobRefs(e.Data)
				for _, h := range refs {
					if bb.Get(h[:]) != nil {
						continue
					}
					zst := blobs(h)
					if zst == nil {
						continue // pruned before export (verify accepted it)
					}
					if _, err := decodeBlob(h, zst); err != nil {
						return err
					}
					if err := bb.Put(h[:], zst); err != nil {
						return err
					}
				}
				prev = Sum(line)
				seq++
			}
			if progress != nil {
				progress(seq, rep.Entries)
			}
			return nil
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
	if _, err := os.Lstat(dst); err == nil {
		return fmt.Errorf("%s: %w", dst, ErrExists)
	}
	if err := os.Rename(tmpPath, dst); err != nil {
		return err
	}
	return syncDir(filepath.Dir(dst))
}
