package ledger

import (
	"bytes"
	"fmt"
	"io"

	"github.com/klauspost/compress/zstd"
	"github.com/zeebo/blake3"
	bolt "go.etcd.io/bbolt"
)

// MaxBlobFrame bounds a stored blob's zstd frame: the largest blob stored
// raw plus zstd's block headers and some slack. A reader of frames from
// outside (a bundle, an engine) refuses anything larger.
const MaxBlobFrame = maxBlobFrame

// Source is a ledger read through something other than this process's
// own bbolt transaction: the running engine over gRPC, for a client while
// the engine holds the file. A Source is outside input: VerifySource and
// ExportSource check everything it hands over exactly as Verify and
// Export check the file, and take nothing on its word but the head it
// names (which the entries must then reach).
type Source interface {
	// Head returns the head to read up to. The ledger may grow while it
	// is read; everything at or below this head is fixed.
	Head() (Head, error)
	// Entries calls fn with the stored bytes of each entry with
	// from <= seq <= to, in key order, stopping at fn's first error
	// (returned as is). fn may keep raw.
	Entries(from, to uint64, fn func(seq uint64, raw []byte) error) error
	// Blob opens a blob's stored zstd frame; an error wrapping
	// ErrNotFound when the blob is not stored.
	Blob(h Hash) (io.ReadCloser, error)
}

// VerifySource checks a ledger read from src as Verify checks the file:
// every entry up to src's head, the chain, the head and every blob an
// entry names, with the same checker, and gives the same report for the
// same stored bytes. Memory stays bounded whatever src sends: entries are
// handed to the checker in chunks of at most chunkSize entries or
// streamChunkBytes (plus one entry), within the stream checker's byte
// budget. An error means verification could not run (src failed); the
// findings are in the Report.
func VerifySource(src Source, opts VerifyOptions) (*Report, error) {
	metaHead, err := src.Head()
	if err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	c := newChecker(opts, false, metaHead.Seq+1, 0, nil)
	c.budget = newByteBudget(streamInflight)
	if ts, ok := src.(TileSource); ok {
		tiles, err := newTileCopy(ts, metaHead.Seq+1)
		if err != nil {
			c.finish()
			return nil, fmt.Errorf("verify: %w", err)
		}
		defer tiles.close()
		c.useStoreTiles(tiles.tx)
	}
	idx, size := 0, 0
	items := make([]item, 0, chunkSize)
	err = src.Entries(0, metaHead.Seq, func(seq uint64, raw []byte) error {
		items = append(items, item{key: seq, raw: raw})
		size += len(raw)
		if len(items) == chunkSize || size >= streamChunkBytes {
			c.submit(chunk{idx: idx, items: items})
			idx, size = idx+1, 0
			items = make([]item, 0, chunkSize)
		}
		return nil
	})
	if len(items) > 0 {
		c.submit(chunk{idx: idx, items: items})
	}
	r, refs, pruned := c.finish()
	if err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	var blobFailures []*IntegrityError
	if bs, ok := src.(BlobBatchSource); ok {
		if blobFailures, err = checkBlobsBatched(opts.Workers, refs, pruned, bs); err != nil {
			return nil, fmt.Errorf("verify: %w", err)
		}
	} else {
		blobFailures = checkBlobs(opts.Workers, refs, pruned, src.Blob)
	}
	if blobFailures, err = excusePrunedSince(src, metaHead, blobFailures); err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	if r.Entries == 0 {
		r.Failures = append(r.Failures, &IntegrityError{Seq: 0, Kind: KindGap,
			Detail: fmt.Sprintf("no entries stored (meta head is %d)", metaHead.Seq)})
	}
	if r.Entries > 0 && (metaHead.Seq != r.HeadSeq || metaHead.Hash.String() != r.HeadHash) {
		r.Failures = append(r.Failures, &IntegrityError{Seq: r.HeadSeq, Kind: KindHeadMismatch,
			Detail:   fmt.Sprintf("meta says head %d %s, last entry is %d %s", metaHead.Seq, metaHead.Hash, r.HeadSeq, r.HeadHash),
			Expected: metaHead.Hash.String(), Found: r.HeadHash})
	}
	r.Failures = append(r.Failures, blobFailures...)
	r.finish()
	return r, nil
}

// LocalSource is the ledger as a Source, each call in its own short read
// transaction, so a reader (the engine serving a client) never holds a
// transaction open across a slow consumer: a long read transaction would
// block bbolt's remap and with it every commit.
func (l *Ledger) LocalSource(head Head) Source { return localSource{l: l, head: head} }

var _ TileSource = localSource{}

type localSource struct {
	l    *Ledger
	head Head
}

func (s localSource) Head() (Head, error) { return s.head, nil }

// localBatch is how many entries one read transaction of localSource
// reads before it lets go (and a commit may remap).
const localBatch = 4096

func (s localSource) Entries(from, to uint64, fn func(seq uint64, raw []byte) error) error {
	now, err := s.l.Head()
	if err != nil {
		return err
	}
	to = min(to, now.Seq) // nothing is stored past the head
	for from <= to {
		var batch []item
		end := min(to, from+localBatch-1)
		err := s.l.RangeRaw(from, end, func(seq uint64, raw []byte) error {
			batch = append(batch, item{key: seq, raw: append([]byte(nil), raw...)})
			return nil
		})
		if err != nil {
			return err
		}
		for _, it := range batch {
			if err := fn(it.key, it.raw); err != nil {
				return err
			}
		}
		if end == to {
			break // to may be the largest uint64
		}
		from = end + 1
	}
	return nil
}

func (s localSource) Blob(h Hash) (io.ReadCloser, error) {
	zst, err := s.l.BlobFrame(h)
	if err != nil {
		return nil, err
	}
	return io.NopCloser(bytes.NewReader(zst)), nil
}

// BlobFrame returns a blob's stored zstd frame, as stored (not checked:
// the caller checks it, as a client of the engine must anyway), or an
// error wrapping ErrNotFound.
func (l *Ledger) BlobFrame(h Hash) ([]byte, error) {
	var zst []byte
	err := l.view(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketBlobs).Get(h[:])
		if v == nil {
			return fmt.Errorf("blob %s: %w", h, ErrNotFound)
		}
		zst = append([]byte(nil), v...)
		return nil
	})
	return zst, err
}

// BlobFramePart returns at most max bytes of a blob's stored frame from
// off, and the frame's size, in one short read transaction: a server
// streams a large frame in pieces without holding it whole or a
// transaction open. Stored frames never change; a blob pruned between two
// pieces is ErrNotFound.
func (l *Ledger) BlobFramePart(h Hash, off int64, max int) (part []byte, size int64, err error) {
	err = l.view(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketBlobs).Get(h[:])
		if v == nil {
			return fmt.Errorf("blob %s: %w", h, ErrNotFound)
		}
		size = int64(len(v))
		if off > size {
			return fmt.Errorf("blob %s: offset %d past its %d bytes", h, off, size)
		}
		part = append([]byte(nil), v[off:off+min(int64(max), size-off)]...)
		return nil
	})
	return part, size, err
}

// StatBlobFrame summarises a stored frame as StatBlob does, from its
// size and its first bytes (at least zstd.HeaderMaxSize of them when the
// frame is that long): the content size its header records, -1 when it
// records none.
func StatBlobFrame(h Hash, head []byte, storedSize int) BlobInfo {
	info := BlobInfo{Hash: h, Size: -1, CompressedSize: storedSize}
	var fh zstd.Header
	if fh.Decode(head) == nil && fh.HasFCS {
		info.Size = int64(fh.FrameContentSize)
	}
	return info
}

// BlobFrameSize decompresses a stored frame read from r as a stream, in
// bounded memory (one zstd window), and returns its content size once the
// content hashes to want; else an IntegrityError (blob-corrupt).
func BlobFrameSize(want Hash, r io.Reader) (int64, error) {
	dec := newBlobDecoder()
	defer dec.Close()
	corrupt := func(format string, args ...any) error {
		return &IntegrityError{Kind: KindBlobCorrupt, Detail: fmt.Sprintf("blob %s ", want) + fmt.Sprintf(format, args...), Expected: want.String()}
	}
	if err := dec.Reset(r); err != nil {
		return 0, corrupt("does not decompress: %v", err)
	}
	h := blake3.New()
	n, err := io.Copy(h, io.LimitReader(dec, MaxBlobSize+1))
	switch {
	case err != nil:
		return 0, corrupt("does not decompress: %v", err)
	case n > MaxBlobSize:
		return 0, corrupt("is larger than the maximum blob size (%d bytes)", MaxBlobSize)
	}
	var got Hash
	h.Sum(got[:0])
	if got != want {
		return 0, corrupt("hashes to %s", got)
	}
	return n, nil
}

// ParseStored parses the stored bytes of entry seq as the ledger's own
// reads do: a value that does not parse, or names another seq, is an
// IntegrityError.
func ParseStored(seq uint64, raw []byte) (Entry, error) { return parseStored(seq, raw) }
