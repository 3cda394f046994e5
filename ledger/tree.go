package ledger

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"

	"github.com/transparency-dev/merkle/compact"
	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
	bolt "go.etcd.io/bbolt"
)

// The Merkle tree (see doc.go, "Merkle tree"): bucket "tree" holds the
// C2SP tlog-tiles of the RFC 6962 tree over the entries, keyed by a level
// byte and the tile index (8 bytes big-endian); a value is width
// concatenated 32-byte hashes. Every tile is stored but the partial one
// at the right edge of level 0, which is the leaf hashes of the last
// entries: a commit of a few entries then writes no tile at all. Meta key "tree" names the layout once the
// bucket holds the whole tree: a ledger without it is older than the tree.
var (
	bucketTree = []byte("tree")
	metaTree   = []byte("tree")
)

// TreeLayout is the value of meta "tree": RFC 6962 SHA-256 tree, stored in
// the C2SP tlog-tiles layout.
const TreeLayout = "rfc6962-sha256/tlog-tiles"

const (
	tileHeight = 8               // node heights per tile level
	tileWidth  = 1 << tileHeight // hashes in a full tile
	hashSize   = sha256.Size     // one tree hash
	maxTileLvl = 64 / tileHeight // tile levels a 64-bit tree can reach
	tileKeyLen = 1 + 8           // level byte + index
	fullTileSz = tileWidth * hashSize
)

// TreeHead is the RFC 6962 tree over entries 0..Size-1 (leaf i is the
// stored bytes of entry seq i).
type TreeHead struct {
	Size uint64
	Root [32]byte
}

// treeHasher hashes interior nodes: SHA-256(0x01 || left || right), as
// rfc6962.DefaultHasher.HashChildren (the known-answer tests hold them
// equal) without its allocation of a hasher per node.
var treeHasher = nodeHasher{}

type nodeHasher struct{}

func (n nodeHasher) HashChildren(l, r []byte) []byte {
	h := n.sum(l, r)
	return h[:]
}

// sum is HashChildren into an array.
func (nodeHasher) sum(l, r []byte) [32]byte {
	var buf [1 + 2*hashSize]byte
	buf[0] = rfc6962.RFC6962NodeHashPrefix
	copy(buf[1:], l)
	copy(buf[1+hashSize:], r)
	return sha256.Sum256(buf[:])
}

// treeFactory builds the compact ranges of the tree.
var treeFactory = &compact.RangeFactory{Hash: treeHasher.HashChildren}

// LeafHash is the RFC 6962 leaf hash of an entry: SHA-256(0x00 || entry).
func LeafHash(entry []byte) [32]byte {
	var lh leafHasher
	return lh.sum(entry)
}

// leafHasher computes leaf hashes with one SHA-256 state and one output
// buffer, reused: a leaf costs no allocation (a slice handed to the
// hash.Hash interface escapes, so neither the prefix nor the sum may be
// a fresh one each call).
type leafHasher struct {
	h   hash.Hash
	out [32]byte
}

// leafPrefix is the RFC 6962 leaf prefix, shared for the reason above.
var leafPrefix = [1]byte{rfc6962.RFC6962LeafHashPrefix}

func (lh *leafHasher) sum(entry []byte) [32]byte {
	if lh.h == nil {
		lh.h = sha256.New()
	}
	lh.h.Reset()
	lh.h.Write(leafPrefix[:])
	lh.h.Write(entry)
	lh.h.Sum(lh.out[:0])
	return lh.out
}

// emptyTreeRoot is the root of the tree of no entries: SHA-256 of nothing.
func emptyTreeRoot() [32]byte { return sha256.Sum256(nil) }

func tileKey(level uint8, index uint64) []byte {
	k := make([]byte, tileKeyLen)
	k[0] = level
	binary.BigEndian.PutUint64(k[1:], index)
	return k
}

func parseTileKey(k []byte) (level uint8, index uint64, ok bool) {
	if len(k) != tileKeyLen || k[0] >= maxTileLvl {
		return 0, 0, false
	}
	return k[0], binary.BigEndian.Uint64(k[1:]), true
}

// Errors of the tree.
var (
	// ErrNoTree is returned by tree reads on a ledger that has no tree
	// yet: one older than the tree, opened read-only (a writable open
	// builds it).
	ErrNoTree = errors.New("ledger has no merkle tree (older ledger: open it for writing once to build it)")
	// ErrTreeSize is returned for a tree size or index beyond the
	// committed tree.
	ErrTreeSize = errors.New("tree size out of range")
	// ErrTreeDamaged is returned when a stored tile is missing or not of
	// the width the tree's size implies. It is a kind of ErrInconsistent:
	// Open for writing refuses such a ledger.
	ErrTreeDamaged error = treeDamagedError{}
)

type treeDamagedError struct{}

func (treeDamagedError) Error() string        { return "merkle tree tiles damaged" }
func (treeDamagedError) Is(target error) bool { return target == ErrInconsistent }

// tileStore reads tree nodes from the tiles of one transaction. The
// partial tile at the right edge of level 0 is not stored: it is the leaf
// hashes of the last size mod 256 entries, hashed from entries when read
// (at most 255 of them).
type tileStore struct {
	b       *bolt.Bucket
	entries *bolt.Bucket // nil: no level-0 edge tile (verify compares stored tiles only)
	size    uint64
	// edge, if set, is the writer's committed level-0 edge: the leaf
	// hashes it holds of the edge tile are not hashed again (entries
	// never change, so a later commit's edge holds the same hashes for
	// the entries the transaction sees).
	edge *edgeTile
}

// tile returns tile lvl/idx: stored, or for the level-0 edge, hashed
// from the entries.
func (t tileStore) tile(lvl uint8, idx uint64) []byte {
	if v := t.b.Get(tileKey(lvl, idx)); v != nil || lvl != 0 || t.entries == nil || idx != t.size/tileWidth {
		return v
	}
	var lh leafHasher
	var out []byte
	seq := idx * tileWidth
	if e := t.edge; e != nil && e.idx == idx {
		n := min(uint64(len(e.hashes))/hashSize, t.size-seq)
		out = append(make([]byte, 0, (t.size-seq)*hashSize), e.hashes[:n*hashSize]...)
		seq += n
	}
	for ; seq < t.size; seq++ {
		raw := t.entries.Get(seqKey(seq))
		if raw == nil {
			break // short: the caller says the tree is damaged
		}
		h := lh.sum(raw)
		out = append(out, h[:]...)
	}
	return out
}

// nodeHash returns the hash of node id: read from its tile when its
// height is a multiple of 8, else hashed up from the at most 128 hashes
// under it in the tile below.
func (t tileStore) nodeHash(id compact.NodeID) ([]byte, error) {
	lvl, r := id.Level/tileHeight, id.Level%tileHeight
	lo := id.Index << r
	n := uint64(1) << r
	tile := t.tile(uint8(lvl), lo/tileWidth)
	off := lo % tileWidth
	if uint64(len(tile)) < (off+n)*hashSize {
		return nil, fmt.Errorf("%w: node %d/%d needs tile %d/%d to hold %d hashes, it holds %d bytes",
			ErrTreeDamaged, id.Level, id.Index, lvl, lo/tileWidth, off+n, len(tile))
	}
	hs := make([][]byte, n)
	for i := range hs {
		hs[i] = tile[(off+uint64(i))*hashSize : (off+uint64(i)+1)*hashSize]
	}
	for len(hs) > 1 {
		for i := 0; i < len(hs)/2; i++ {
			hs[i] = treeHasher.HashChildren(hs[2*i], hs[2*i+1])
		}
		hs = hs[:len(hs)/2]
	}
	return bytes.Clone(hs[0]), nil
}

// rangeHashes returns the compact range [0,size) hashes, left to right.
func (t tileStore) rangeHashes(size uint64) ([][]byte, error) {
	ids := compact.RangeNodes(0, size, nil)
	out := make([][]byte, len(ids))
	for i, id := range ids {
		h, err := t.nodeHash(id)
		if err != nil {
			return nil, err
		}
		out[i] = h
	}
	return out, nil
}

// root returns the root of the first size entries.
func (t tileStore) root(size uint64) ([32]byte, error) {
	if size == 0 {
		return emptyTreeRoot(), nil
	}
	hs, err := t.rangeHashes(size)
	if err != nil {
		return [32]byte{}, err
	}
	return rootOf(hs), nil
}

// rootOf folds compact range [0,n) hashes into the root.
func rootOf(hs [][]byte) [32]byte {
	if len(hs) == 0 {
		return emptyTreeRoot()
	}
	h := hs[len(hs)-1]
	for i := len(hs) - 2; i >= 0; i-- {
		h = treeHasher.HashChildren(hs[i], h)
	}
	return [32]byte(h)
}

// proofHashes fetches the hashes of nodes and rehashes the ephemeral node.
func (t tileStore) proofHashes(nodes proof.Nodes) ([][]byte, error) {
	hs := make([][]byte, len(nodes.IDs))
	for i, id := range nodes.IDs {
		h, err := t.nodeHash(id)
		if err != nil {
			return nil, err
		}
		hs[i] = h
	}
	return nodes.Rehash(hs, treeHasher.HashChildren)
}

// viewTree runs fn with the committed tree: its tiles and its size.
func (l *Ledger) viewTree(fn func(t tileStore, size uint64) error) error {
	return l.view(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		b := tx.Bucket(bucketTree)
		if b == nil || meta == nil || string(meta.Get(metaTree)) != TreeLayout {
			if meta != nil && meta.Get(metaTree) != nil {
				return fmt.Errorf("%w: meta names the tree but the tree bucket is gone", ErrTreeDamaged)
			}
			return ErrNoTree
		}
		h, err := readHead(meta)
		if err != nil {
			return err
		}
		return fn(tileStore{b: b, entries: tx.Bucket(bucketEntries), size: h.Seq + 1, edge: l.edgeTile()}, h.Seq+1)
	})
}

// TreeHead returns the committed tree: Size is head_seq+1. Entries still
// queued by Async appends are not included.
func (l *Ledger) TreeHead() (TreeHead, error) {
	var th TreeHead
	err := l.viewTree(func(t tileStore, size uint64) error {
		root, err := t.root(size)
		th = TreeHead{Size: size, Root: root}
		return err
	})
	if err != nil {
		return TreeHead{}, fmt.Errorf("tree head: %w", err)
	}
	return th, nil
}

// TreeHeadAt returns the tree of the first size entries (size at most the
// committed tree's), read from the stored tiles.
func (l *Ledger) TreeHeadAt(size uint64) (TreeHead, error) {
	var th TreeHead
	err := l.viewTree(func(t tileStore, n uint64) error {
		if size > n {
			return fmt.Errorf("%w: %d > committed size %d", ErrTreeSize, size, n)
		}
		root, err := t.root(size)
		th = TreeHead{Size: size, Root: root}
		return err
	})
	if err != nil {
		return TreeHead{}, fmt.Errorf("tree head at %d: %w", size, err)
	}
	return th, nil
}

// RangeHashesAt returns the compact range [0,size) of the tree: the roots
// of its perfect subtrees, left to right. It is all a verifier needs to
// go on computing the tree from entry size onwards (a segment export).
func (l *Ledger) RangeHashesAt(size uint64) ([][]byte, error) {
	var hs [][]byte
	err := l.viewTree(func(t tileStore, n uint64) error {
		if size > n {
			return fmt.Errorf("%w: %d > committed size %d", ErrTreeSize, size, n)
		}
		var err error
		hs, err = t.rangeHashes(size)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("tree range at %d: %w", size, err)
	}
	return hs, nil
}

// InclusionProof returns the RFC 6962 inclusion proof of entry index in
// the tree of the first size entries, in RFC 6962 order.
func (l *Ledger) InclusionProof(index, size uint64) ([][]byte, error) {
	var out [][]byte
	err := l.viewTree(func(t tileStore, n uint64) error {
		if size > n {
			return fmt.Errorf("%w: %d > committed size %d", ErrTreeSize, size, n)
		}
		nodes, err := proof.Inclusion(index, size)
		if err != nil {
			return fmt.Errorf("%w: %v", ErrTreeSize, err)
		}
		out, err = t.proofHashes(nodes)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("inclusion proof of %d in %d: %w", index, size, err)
	}
	return out, nil
}

// ConsistencyProof returns the RFC 6962 consistency proof from the tree of
// the first size1 entries to that of the first size2.
func (l *Ledger) ConsistencyProof(size1, size2 uint64) ([][]byte, error) {
	var out [][]byte
	err := l.viewTree(func(t tileStore, n uint64) error {
		if size2 > n {
			return fmt.Errorf("%w: %d > committed size %d", ErrTreeSize, size2, n)
		}
		nodes, err := proof.Consistency(size1, size2)
		if err != nil {
			return fmt.Errorf("%w: %v", ErrTreeSize, err)
		}
		out, err = t.proofHashes(nodes)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("consistency proof %d to %d: %w", size1, size2, err)
	}
	return out, nil
}

// Tile returns the tlog-tiles tile at level and index as it was when it
// held width hashes (1..256; 256 is a full tile). Tiles only grow, so
// this is a prefix of the stored tile, and a reader can serve a tree
// below the live head. It fails with ErrNotFound when the tile does not
// (yet) hold width hashes.
func (l *Ledger) Tile(level uint8, index uint64, width int) ([]byte, error) {
	if width < 1 || width > tileWidth || level >= maxTileLvl {
		return nil, fmt.Errorf("tile %d/%d width %d: %w", level, index, width, ErrTreeSize)
	}
	var out []byte
	err := l.viewTree(func(t tileStore, _ uint64) error {
		v := t.tile(level, index)
		if len(v)%hashSize != 0 || len(v) > fullTileSz {
			return fmt.Errorf("%w: tile %d/%d holds %d bytes", ErrTreeDamaged, level, index, len(v))
		}
		if len(v) < width*hashSize {
			return fmt.Errorf("%w: tile %d/%d holds %d hashes", ErrNotFound, level, index, len(v)/hashSize)
		}
		out = bytes.Clone(v[:width*hashSize])
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("tile %d/%d width %d: %w", level, index, width, err)
	}
	return out, nil
}
