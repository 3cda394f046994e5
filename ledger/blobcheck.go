package ledger

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/zstd"
	"github.com/zeebo/blake3"
)

// maxBlobFrame bounds a stored blob's zstd frame: the largest blob
// (MaxBlobSize) stored raw, plus zstd's block headers and some slack. A
// bundle file larger than this cannot be a blob opx wrote.
const maxBlobFrame = MaxBlobSize + MaxBlobSize>>10 + 1<<16

// maxBlobCheckers bounds how many blobs are checked at once; each checker
// holds one zstd window (MaxStreamWindow) at most.
const maxBlobCheckers = 4

// BlobSource opens the stored zstd frame of a blob by hash. It returns an
// error wrapping ErrNotFound when the blob is absent.
type BlobSource func(Hash) (io.ReadCloser, error)

// DirBlobSource reads blobs from an export bundle directory, one file
// "<hash>.zst" per blob. A file that is not a regular file (a FIFO, a
// device, a directory) or is larger than any blob frame is refused, so a
// hostile bundle cannot make a reader hang or read without end.
func DirBlobSource(dir string) BlobSource {
	return func(h Hash) (io.ReadCloser, error) {
		p := filepath.Join(dir, h.String()+".zst")
		f, err := openRegular(p)
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("blob %s: %w", h, ErrNotFound)
		}
		if err != nil {
			return nil, err
		}
		fi, err := f.Stat()
		if err == nil && fi.Size() > maxBlobFrame {
			err = fmt.Errorf("%s is %d bytes, larger than any blob frame (%d bytes)", p, fi.Size(), int64(maxBlobFrame))
		}
		if err != nil {
			f.Close()
			return nil, err
		}
		return f, nil
	}
}

// memBlobSource serves frames from a lookup (the store's blobs bucket).
func memBlobSource(get func(Hash) []byte) BlobSource {
	return func(h Hash) (io.ReadCloser, error) {
		v := get(h)
		if v == nil {
			return nil, fmt.Errorf("blob %s: %w", h, ErrNotFound)
		}
		return io.NopCloser(bytes.NewReader(v)), nil
	}
}

// newBlobDecoder returns a streaming zstd decoder for blob frames: one
// goroutine, a window of at most MaxStreamWindow, so checking a blob costs
// that much memory whatever the blob's size.
func newBlobDecoder() *zstd.Decoder {
	d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
		zstd.WithDecoderMaxMemory(MaxStreamWindow), zstd.WithDecoderMaxWindow(MaxStreamWindow))
	if err != nil {
		panic(err) // only fails on invalid options
	}
	return d
}

// checkBlobFrame decompresses one blob frame as a stream and checks that
// it hashes to want and is at most MaxBlobSize bytes; the content is
// never held whole.
func checkBlobFrame(dec *zstd.Decoder, want Hash, r io.Reader) *IntegrityError {
	corrupt := func(format string, args ...any) *IntegrityError {
		return &IntegrityError{Kind: KindBlobCorrupt, Detail: fmt.Sprintf("blob %s ", want) + fmt.Sprintf(format, args...), Expected: want.String()}
	}
	if err := dec.Reset(r); err != nil {
		return corrupt("does not decompress: %v", err)
	}
	defer dec.Reset(nil)
	h := blake3.New()
	n, err := io.Copy(h, io.LimitReader(dec, MaxBlobSize+1))
	switch {
	case errors.Is(err, zstd.ErrWindowSizeExceeded), errors.Is(err, zstd.ErrDecoderSizeExceeded):
		return corrupt("does not decompress within %d bytes of window: %v", MaxStreamWindow, err)
	case err != nil:
		return corrupt("does not decompress: %v", err)
	case n > MaxBlobSize:
		return corrupt("is larger than the maximum blob size (%d bytes)", MaxBlobSize)
	}
	var got Hash
	h.Sum(got[:0])
	if got != want {
		f := corrupt("hashes to %s", got)
		f.Found = got.String()
		return f
	}
	return nil
}

// checkBlobs checks every named blob in parallel: present (or pruned) and
// hashing to its key.
func checkBlobs(workers int, refs map[Hash]uint64, pruned map[Hash]bool, src BlobSource) []*IntegrityError {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, maxBlobCheckers, max(len(refs), 1))
	hashes := make([]Hash, 0, len(refs))
	for h := range refs {
		hashes = append(hashes, h)
	}
	var mu sync.Mutex
	var out []*IntegrityError
	var wg sync.WaitGroup
	next := atomic.Int64{}
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dec := newBlobDecoder()
			defer dec.Close()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(hashes) {
					return
				}
				h := hashes[i]
				if f := checkOneBlob(dec, h, refs[h], pruned[h], src); f != nil {
					mu.Lock()
					out = append(out, f)
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return out
}

// checkOneBlob checks blob h, first named by entry seq.
func checkOneBlob(dec *zstd.Decoder, h Hash, seq uint64, pruned bool, src BlobSource) (f *IntegrityError) {
	defer catchFaults()()
	defer func() {
		if r := recover(); r != nil {
			f = &IntegrityError{Seq: seq, Kind: KindBlobCorrupt, Detail: fmt.Sprintf("blob %s does not read: %v", h, r), Expected: h.String()}
		}
	}()
	rc, err := src(h)
	switch {
	case errors.Is(err, ErrNotFound) && pruned:
		return nil
	case errors.Is(err, ErrNotFound):
		return &IntegrityError{Seq: seq, Kind: KindMissingBlob,
			Detail: fmt.Sprintf("blob %s named by entry %d is not stored", h, seq), Expected: h.String()}
	case err != nil:
		return &IntegrityError{Seq: seq, Kind: KindBlobCorrupt, Detail: fmt.Sprintf("blob %s: %v", h, err), Expected: h.String()}
	}
	defer rc.Close()
	if f = checkBlobFrame(dec, h, rc); f != nil {
		f.Seq = seq
	}
	return f
}
