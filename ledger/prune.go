package ledger

import (
	"context"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// PruneBlobs removes blobs for retention. It first appends rec, which must
// be a chronicle.pruned entry listing the blobs in its "blobs" array,
// durably; then it deletes those blobs in one transaction. Verify accepts
// exactly the blobs an earlier chronicle.pruned entry lists as missing, so
// the chain still verifies; entries are never touched.
//
// A crash between the two steps leaves the blobs in place, which verify
// also accepts. A blob that an entry appended after rec names again (the
// same content recorded anew) is kept.
func (l *Ledger) PruneBlobs(ctx context.Context, rec Record) (Appended, error) {
	return l.PruneBlobsKeeping(ctx, rec, ^uint64(0))
}

// PruneBlobsKeeping is PruneBlobs for a caller that planned from the
// entries before keepFrom: a blob that any entry from keepFrom on names
// (one appended while the caller planned) is kept too, not only those
// named after rec.
func (l *Ledger) PruneBlobsKeeping(ctx context.Context, rec Record, keepFrom uint64) (Appended, error) {
	if l.readOnly {
		return Appended{}, ErrReadOnly
	}
	if rec.Type != TypePruned {
		return Appended{}, fmt.Errorf("%w: PruneBlobs needs a %s record, not %q", ErrInvalidRecord, TypePruned, rec.Type)
	}
	data, err := canonicalData(rec.Data)
	if err != nil {
		return Appended{}, fmt.Errorf("%w: %v", ErrInvalidRecord, err)
	}
	hashes, err := PrunedBlobs(data)
	if err != nil || len(hashes) == 0 {
		return Appended{}, fmt.Errorf("%w: %s needs a non-empty \"blobs\" array of hashes", ErrInvalidRecord, TypePruned)
	}
	app, err := l.Append(ctx, Sync, rec)
	if err != nil {
		return Appended{}, err
	}
	a := app[0]
	// Every write transaction runs under cmu (see appendAtHead).
	l.w.cmu.Lock()
	defer l.w.cmu.Unlock()
	err = l.db.Update(func(tx *bolt.Tx) error {
		keep := map[Hash]bool{}
		c := tx.Bucket(bucketEntries).Cursor()
		for k, v := c.Seek(seqKey(min(keepFrom, a.Seq+1))); k != nil; k, v = c.Next() {
			e, err := ParseEntry(v)
			if err != nil {
				continue
			}
			refs, _ := BlobRefs(e.Data)
			for _, h := range refs {
				keep[h] = true
			}
		}
		b := tx.Bucket(bucketBlobs)
		for _, h := range hashes {
			if !keep[h] {
				if err := b.Delete(h[:]); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return a, fmt.Errorf("prune blobs after entry %d (the entry is recorded; the blobs remain): %w", a.Seq, err)
	}
	return a, nil
}
