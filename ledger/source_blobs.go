package ledger

import (
	"bytes"
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
