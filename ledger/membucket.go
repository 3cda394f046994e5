package ledger

import (
	"bytes"
	"sort"
)

// MemBucket is a Bucket in memory: a projection folded from entries
// without a ledger file to keep it in (review of a read-only ledger, and
// tests that compare the stored projection with a fresh fold).
type MemBucket struct {
	m      map[string][]byte
	keys   []string // sorted; nil when a change made it stale
	sorted bool
}

// NewMemBucket returns an empty bucket.
func NewMemBucket() *MemBucket { return &MemBucket{m: map[string][]byte{}} }

// Get implements Bucket.
func (b *MemBucket) Get(key []byte) []byte { return b.m[string(key)] }

// Put implements Bucket.
func (b *MemBucket) Put(key, value []byte) error {
	k := string(key)
	if _, ok := b.m[k]; !ok {
		b.sorted = false
	}
	b.m[k] = append([]byte{}, value...) // an empty value is not a missing key
	return nil
}

// Delete implements Bucket.
func (b *MemBucket) Delete(key []byte) error {
	k := string(key)
	if _, ok := b.m[k]; ok {
		delete(b.m, k)
		b.sorted = false
	}
	return nil
}

// Len returns the number of keys.
func (b *MemBucket) Len() int { return len(b.m) }

// Cursor implements Bucket. Changing the bucket while a cursor walks it
// is not supported.
func (b *MemBucket) Cursor() Cursor {
	if !b.sorted {
		b.keys = b.keys[:0]
		for k := range b.m {
			b.keys = append(b.keys, k)
		}
		sort.Strings(b.keys)
		b.sorted = true
	}
	return &memCursor{b: b, i: -1}
}

type memCursor struct {
	b *MemBucket
	i int
}

func (c *memCursor) at() ([]byte, []byte) {
	if c.i < 0 || c.i >= len(c.b.keys) {
		return nil, nil
	}
	k := c.b.keys[c.i]
	return []byte(k), c.b.m[k]
}

func (c *memCursor) First() ([]byte, []byte) { c.i = 0; return c.at() }
func (c *memCursor) Last() ([]byte, []byte)  { c.i = len(c.b.keys) - 1; return c.at() }
func (c *memCursor) Next() ([]byte, []byte) {
	if c.i < len(c.b.keys) {
		c.i++
	}
	return c.at()
}
func (c *memCursor) Prev() ([]byte, []byte) {
	if c.i >= 0 {
		c.i--
	}
	return c.at()
}
func (c *memCursor) Seek(seek []byte) ([]byte, []byte) {
	c.i = sort.Search(len(c.b.keys), func(i int) bool { return bytes.Compare([]byte(c.b.keys[i]), seek) >= 0 })
	return c.at()
}
