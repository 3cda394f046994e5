package ledger

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"
	"sync"
)

// BlobBatchSource is a Source that fetches many small blob frames in one
// request (a round trip per blob would dominate a verify over a network).
type BlobBatchSource interface {
	Source
	// BlobBatch calls fn for each of hashes, in order, with its stored
	// frame: found is false when the blob is not stored, and zst is nil
	// (found true) when the frame is too large to come in a batch (the
	// caller fetches it with Blob). fn may keep zst.
	BlobBatch(hashes []Hash, fn func(i int, zst []byte, found bool) error) error
}

// blobBatch is how many blobs one BlobBatch call asks for.
const blobBatch = 512

// checkBlobsBatched is checkBlobs over a BlobBatchSource: the frames come
// in batches, in order of the first entry naming them, and are checked on
// up to maxBlobCheckers workers by the same per-blob check. It holds at
// most a few frames of at most a batch message each, plus what the
// workers check; a large frame is streamed by itself (Blob).
func checkBlobsBatched(workers int, refs map[Hash]uint64, pruned map[Hash]bool, src BlobBatchSource) ([]*IntegrityError, error) {
	workers = min(max(workers, 1), maxBlobCheckers)
	hashes := make([]Hash, 0, len(refs))
	for h := range refs {
		hashes = append(hashes, h)
	}
	sort.Slice(hashes, func(i, j int) bool {
		a, b := refs[hashes[i]], refs[hashes[j]]
		return a < b || (a == b && bytes.Compare(hashes[i][:], hashes[j][:]) < 0)
	})
	type job struct {
		h     Hash
		zst   []byte
		found bool
	}
	jobs := make(chan job, workers)
	var mu sync.Mutex
	var out []*IntegrityError
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dec := newBlobDecoder()
			defer dec.Close()
			for j := range jobs {
				one := func(h Hash) (io.ReadCloser, error) {
					switch {
					case !j.found:
						return nil, fmt.Errorf("blob %s: %w", h, ErrNotFound)
					case j.zst == nil:
						return src.Blob(h)
					}
					return io.NopCloser(bytes.NewReader(j.zst)), nil
				}
				if f := checkOneBlob(dec, j.h, refs[j.h], pruned[j.h], one); f != nil {
					mu.Lock()
					out = append(out, f)
					mu.Unlock()
				}
			}
		}()
	}
	var err error
	for i := 0; i < len(hashes) && err == nil; i += blobBatch {
		batch := hashes[i:min(i+blobBatch, len(hashes))]
		err = src.BlobBatch(batch, func(k int, zst []byte, found bool) error {
			if k < 0 || k >= len(batch) {
				return fmt.Errorf("blob %d of a batch of %d", k, len(batch))
			}
			jobs <- job{h: batch[k], zst: zst, found: found}
			return nil
		})
	}
	close(jobs)
	wg.Wait()
	return out, err
}

// prunedSince returns the blobs that chronicle.pruned entries after head
// list, reading on from head as far as src holds now. Retention removes
// a blob in the transaction that appends its chronicle.pruned entry, so a
// reader that fetches blobs after reading the entries up to head may find
// one gone that was there at head. Only entries that chain onto head
// count: a source cannot excuse a missing blob with an entry that does
// not follow the head it named.
func prunedSince(src Source, head Head) (map[Hash]bool, error) {
	out := map[Hash]bool{}
	prev := head.Hash
	next := head.Seq + 1
	err := src.Entries(head.Seq+1, ^uint64(0), func(seq uint64, raw []byte) error {
		e, err := ParseEntry(raw)
		if err != nil || seq != next || e.Seq != seq || e.Prev != prev {
			return errStop // the chain does not continue: stop reading
		}
		prev, next = Sum(raw), seq+1
		if e.Type == TypePruned {
			hs, _ := PrunedBlobs(e.Data)
			for _, h := range hs {
				out[h] = true
			}
		}
		return nil
	})
	if errors.Is(err, errStop) {
		err = nil
	}
	return out, err
}

// excusePrunedSince drops the missing-blob failures of blobs pruned after
// head (prunedSince): at head they were there, and the ledger says why
// they are not now.
func excusePrunedSince(src Source, head Head, fs []*IntegrityError) ([]*IntegrityError, error) {
	missing := false
	for _, f := range fs {
		missing = missing || f.Kind == KindMissingBlob
	}
	if !missing {
		return fs, nil
	}
	later, err := prunedSince(src, head)
	if err != nil {
		return nil, err
	}
	out := fs[:0]
	for _, f := range fs {
		if h, perr := ParseHash(f.Expected); f.Kind == KindMissingBlob && perr == nil && later[h] {
			continue
		}
		out = append(out, f)
	}
	return out, nil
}
