package ledger

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/klauspost/compress/zstd"
	bolt "go.etcd.io/bbolt"
)

// MaxBlobSize bounds a blob's uncompressed size when reading, so a hostile
// frame cannot make a reader allocate without limit.
const MaxBlobSize = 1 << 30

var (
	zstdOnce    sync.Once
	zstdEnc     *zstd.Encoder
	zstdEncFast *zstd.Encoder
	zstdDec     *zstd.Decoder
)

// largeBlob is the size from which blobs are compressed at zstd's fastest
// level: a snapshot of a 100 MB file compresses about twice as fast, to a
// frame within a few percent of the default level's, and the write-ahead
// rule makes the agent wait for it. Any level decodes the same way.
const largeBlob = 1 << 20

// codecs returns the shared zstd encoder and decoder; EncodeAll and
// DecodeAll are safe for concurrent use.
func codecs() (*zstd.Encoder, *zstd.Decoder) {
	zstdOnce.Do(func() {
		var err error
		zstdEnc, err = zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderCRC(true))
		if err != nil {
			panic(err) // only fails on invalid options
		}
		zstdEncFast, err = zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderCRC(true),
			zstd.WithEncoderLevel(zstd.SpeedFastest))
		if err != nil {
			panic(err)
		}
		zstdDec, err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(MaxBlobSize))
		if err != nil {
			panic(err)
		}
	})
	return zstdEnc, zstdDec
}

// prepareBlob hashes and compresses content; done by the caller, outside
// the writer's lock, so blobs compress on all cores. A large blob is
// hashed while it compresses.
func prepareBlob(content []byte) preparedBlob {
	enc, _ := codecs()
	if len(content) < largeBlob {
		return preparedBlob{hash: Sum(content), zst: enc.EncodeAll(content, nil)}
	}
	hashed := make(chan Hash, 1)
	go func() { hashed <- Sum(content) }()
	zst := zstdEncFast.EncodeAll(content, nil)
	return preparedBlob{hash: <-hashed, zst: zst}
}

// decodeBlob decompresses a stored blob and checks it hashes to want.
func decodeBlob(want Hash, zst []byte) ([]byte, error) {
	_, dec := codecs()
	content, err := dec.DecodeAll(zst, nil)
	if err != nil {
		return nil, &IntegrityError{Kind: KindBlobCorrupt, Detail: fmt.Sprintf("blob %s does not decompress: %v", want, err), Expected: want.String()}
	}
	if got := Sum(content); got != want {
		return nil, &IntegrityError{Kind: KindBlobCorrupt, Detail: fmt.Sprintf("blob %s hashes to %s", want, got), Expected: want.String(), Found: got.String()}
	}
	return content, nil
}

// GetBlob returns a blob's content after checking its hash. A blob that
// fails the check yields an error matching ErrBlobCorrupt.
func (l *Ledger) GetBlob(h Hash) ([]byte, error) {
	var zst []byte
	err := l.view(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketBlobs).Get(h[:])
		if v == nil {
			return fmt.Errorf("blob %s: %w", h, ErrNotFound)
		}
		zst = append([]byte(nil), v...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return decodeBlob(h, zst)
}

// BlobInfo summarises a stored blob without decompressing it.
type BlobInfo struct {
	Hash           Hash
	CompressedSize int
	Size           int64 // uncompressed, from the zstd frame header; -1 if unknown
}

// StatBlob returns the stored and uncompressed sizes of a blob.
func (l *Ledger) StatBlob(h Hash) (BlobInfo, error) {
	info := BlobInfo{Hash: h, Size: -1}
	err := l.view(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketBlobs).Get(h[:])
		if v == nil {
			return fmt.Errorf("blob %s: %w", h, ErrNotFound)
		}
		info.CompressedSize = len(v)
		var fh zstd.Header
		if fh.Decode(v) == nil && fh.HasFCS {
			info.Size = int64(fh.FrameContentSize)
		}
		return nil
	})
	return info, err
}

// BlobRefs returns the blobs an entry's data names: every object member
// whose key is "blob" or ends in "_blob" and whose value is a 64-hex
// string. This is the format's convention for naming content, so verify
// and export find blobs without knowing each entry type.
func BlobRefs(data []byte) ([]Hash, error) {
	if !bytes.Contains(data, []byte(`blob"`)) {
		return nil, nil
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	var refs []Hash
	var walk func(v any)
	walk = func(v any) {
		switch t := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(t))
			for k := range t {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				if s, ok := t[k].(string); ok && (k == "blob" || strings.HasSuffix(k, "_blob")) {
					if h, err := ParseHash(s); err == nil {
						refs = append(refs, h)
					}
					continue
				}
				walk(t[k])
			}
		case []any:
			for _, e := range t {
				walk(e)
			}
		}
	}
	walk(v)
	return refs, nil
}

// PrunedBlobs returns the blobs a chronicle.pruned entry's data lists in
// its "blobs" array.
func PrunedBlobs(data []byte) ([]Hash, error) {
	var p struct {
		Blobs []Hash `json:"blobs"`
	}
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, err
	}
	return p.Blobs, nil
}

// canonicalBlobRefs is BlobRefs for data known to be in canonical form
// (strict verify has checked the whole entry): it calls add for each blob
// the data names, walking it in place instead of decoding it. Canonical
// data has no duplicate keys, so the walk finds exactly what BlobRefs'
// decoded maps hold (in another order, which its callers do not use).
func canonicalBlobRefs(data []byte, add func(Hash)) error {
	if !bytes.Contains(data, []byte(`blob"`)) {
		return nil
	}
	s := &scanner{b: data}
	if err := s.walkBlobs(add, 0); err != nil {
		return err
	}
	if s.pos != len(data) {
		return s.fail("trailing data after JSON value")
	}
	return nil
}

// walkBlobs advances past one value of canonical JSON (no spaces),
// calling add for each string member named "blob" or "*_blob" whose value
// is a hash, at any depth.
func (s *scanner) walkBlobs(add func(Hash), depth int) error {
	if depth > maxDepth {
		return s.fail("nesting too deep")
	}
	if s.pos >= len(s.b) {
		return s.fail("unexpected end of input")
	}
	switch s.b[s.pos] {
	case '{':
		s.pos++
		if s.eat('}') {
			return nil
		}
		for {
			k, err := s.keyBytes()
			if err != nil {
				return err
			}
			if !s.eat(':') {
				return s.fail("expected :")
			}
			if s.pos < len(s.b) && s.b[s.pos] == '"' && (string(k) == "blob" || bytes.HasSuffix(k, []byte("_blob"))) {
				v, err := s.p().strBytes() // no copy: only parsed
				if err != nil {
					return err
				}
				if h, err := parseHashBytes(v); err == nil {
					add(h)
				}
			} else if err := s.walkBlobs(add, depth+1); err != nil {
				return err
			}
			if s.eat(',') {
				continue
			}
			if !s.eat('}') {
				return s.fail("expected , or }")
			}
			return nil
		}
	case '[':
		s.pos++
		if s.eat(']') {
			return nil
		}
		for {
			if err := s.walkBlobs(add, depth+1); err != nil {
				return err
			}
			if s.eat(',') {
				continue
			}
			if !s.eat(']') {
				return s.fail("expected , or ]")
			}
			return nil
		}
	}
	return s.skipValue(depth)
}
