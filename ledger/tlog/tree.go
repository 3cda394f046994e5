package tlog

import (
	"github.com/transparency-dev/merkle/compact"
	"github.com/transparency-dev/merkle/rfc6962"
)

// RootBuilder recomputes an RFC 6962 tree's root from its entries, one
// entry at a time, in memory of O(log n) hashes (a compact range): the
// independent recomputation a verifier trusts over any stored root.
type RootBuilder struct {
	r *compact.Range
}

var rangeFactory = &compact.RangeFactory{Hash: rfc6962.DefaultHasher.HashChildren}

// NewRootBuilder returns a builder of the empty tree.
func NewRootBuilder() *RootBuilder { return &RootBuilder{r: rangeFactory.NewEmptyRange(0)} }

// Append adds the next entry (its stored bytes).
func (b *RootBuilder) Append(entry []byte) {
	h := LeafHash(entry)
	// Append fails only for a hash of the wrong size, which LeafHash never
	// gives.
	_ = b.r.Append(h[:], nil)
}

// Size is the number of entries appended.
func (b *RootBuilder) Size() uint64 { return b.r.End() }

// Root is the root of the tree of the entries appended so far (the empty
// tree's root, SHA-256 of nothing, for none).
func (b *RootBuilder) Root() [32]byte {
	var root [32]byte
	if b.r.End() == 0 {
		copy(root[:], rfc6962.DefaultHasher.EmptyRoot())
		return root
	}
	h, _ := b.r.GetRootHash(nil)
	copy(root[:], h)
	return root
}
