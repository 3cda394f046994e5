package ledger

import (
	"bytes"
	"encoding/base64"
	"fmt"

	"github.com/transparency-dev/merkle/compact"
	bolt "go.etcd.io/bbolt"
)

// TypeTreeBuilt records that the tree of an older ledger was built from
// its entries (on the first writable open by an opx that keeps the tree).
const TypeTreeBuilt = "ledger.tree_built"

// TreeBuiltPayload is the data of a ledger.tree_built entry: the tree
// over every entry before it.
type TreeBuiltPayload struct {
	TreeSize uint64 `json:"tree_size"`
	TreeRoot string `json:"tree_root"` // base64 (std), as in a C2SP note
}

// EncodeTreeRoot is a tree root as checkpoints write it: standard base64.
func EncodeTreeRoot(root [32]byte) string { return base64.StdEncoding.EncodeToString(root[:]) }

// DecodeTreeRoot parses a root written by EncodeTreeRoot, strictly.
func DecodeTreeRoot(s string) ([32]byte, error) {
	b, err := base64.StdEncoding.Strict().DecodeString(s)
	if err != nil || len(b) != 32 || base64.StdEncoding.EncodeToString(b) != s {
		if len(s) > 64 {
			s = s[:64] + "…" // outside input: quote a bounded part
		}
		return [32]byte{}, fmt.Errorf("tree root %q is not the base64 of 32 bytes", s)
	}
	return [32]byte(b), nil
}

// tileWriter gathers the nodes a compact range reports as it grows (the
// ones at heights that are multiples of 8) and writes them into their
// tiles: full tiles once, the partial tile at the right edge of each level
// above 0 rewritten as it grows. The partial tile at the edge of level 0
// is kept in memory (edge0) and written only when it is full: it is the
// leaf hashes of the last entries, which readers hash from the entries.
type tileWriter struct {
	edge0   []byte // the level-0 hashes of the partial tile at the edge
	pending [maxTileLvl]struct {
		first  uint64
		hashes []byte
	}
}

// visit is a compact.VisitFn. At one height, completed nodes come in
// index order with no gaps.
func (tw *tileWriter) visit(id compact.NodeID, h []byte) {
	if id.Level%tileHeight != 0 {
		return
	}
	p := &tw.pending[id.Level/tileHeight]
	if len(p.hashes) == 0 {
		p.first = id.Index
	}
	p.hashes = append(p.hashes, h...)
}

// flush writes the gathered nodes into b. A tile that does not hold
// exactly the nodes before the first new one is damage, not a place to
// write.
func (tw *tileWriter) flush(b *bolt.Bucket) error {
	if p := &tw.pending[0]; len(p.hashes) > 0 {
		if uint64(len(tw.edge0)) != p.first%tileWidth*hashSize {
			return fmt.Errorf("%w: the level-0 edge tile holds %d bytes before leaf %d", ErrTreeDamaged, len(tw.edge0), p.first)
		}
		buf := append(bytes.Clone(tw.edge0), p.hashes...)
		ti := p.first / tileWidth
		for ; len(buf) >= fullTileSz; ti++ {
			if err := b.Put(tileKey(0, ti), buf[:fullTileSz:fullTileSz]); err != nil {
				return err
			}
			buf = buf[fullTileSz:]
		}
		tw.edge0 = bytes.Clone(buf)
		p.hashes = nil
	}
	for lvl := 1; lvl < maxTileLvl; lvl++ {
		p := &tw.pending[lvl]
		idx, data := p.first, p.hashes
		for len(data) > 0 {
			ti, off := idx/tileWidth, idx%tileWidth
			key := tileKey(uint8(lvl), ti)
			n := min(uint64(tileWidth)-off, uint64(len(data)/hashSize))
			tile := make([]byte, 0, (off+n)*hashSize)
			if off > 0 {
				old := b.Get(key)
				if uint64(len(old)) != off*hashSize {
					return fmt.Errorf("%w: tile %d/%d holds %d bytes, the tree needs %d before node %d",
						ErrTreeDamaged, lvl, ti, len(old), off*hashSize, idx)
				}
				tile = append(tile, old...)
			}
			tile = append(tile, data[:n*hashSize]...)
			if err := b.Put(key, tile); err != nil {
				return err
			}
			data, idx = data[n*hashSize:], idx+n
		}
		p.hashes = nil
	}
	return nil
}

// cloneRange copies a compact range, so that a commit can grow the copy
// and keep the original until it is durable.
func cloneRange(r *compact.Range) *compact.Range {
	hs := make([][]byte, len(r.Hashes()))
	copy(hs, r.Hashes())
	c, err := treeFactory.NewRange(r.Begin(), r.End(), hs)
	if err != nil {
		panic(err) // a copy of a valid range is valid
	}
	return c
}

// appendTree adds leaves (hashed before the transaction) to a copy of r,
// writes the completed nodes into the tree bucket of tx, and returns the
// copy and the new level-0 edge (edge0 is not changed).
func appendTree(tx *bolt.Tx, r *compact.Range, edge0 []byte, leaves [][32]byte) (*compact.Range, []byte, error) {
	b := tx.Bucket(bucketTree)
	if b == nil {
		return nil, nil, fmt.Errorf("%w: no tree bucket", ErrTreeDamaged)
	}
	out := cloneRange(r)
	tw := tileWriter{edge0: edge0}
	for i := range leaves {
		if err := out.Append(leaves[i][:], tw.visit); err != nil {
			return nil, nil, err
		}
	}
	if err := tw.flush(b); err != nil {
		return nil, nil, err
	}
	return out, tw.edge0, nil
}

// treeAfter is the tree of r with leaves appended, computed in memory.
func treeAfter(r *compact.Range, leaves [][32]byte) TreeHead {
	c := cloneRange(r)
	for i := range leaves {
		if err := c.Append(leaves[i][:], nil); err != nil {
			panic(err) // appending to a valid range cannot fail
		}
	}
	return TreeHead{Size: c.End(), Root: rootOf(c.Hashes())}
}

// createTree makes the tree bucket holding genesis, in Create's
// transaction.
func createTree(tx *bolt.Tx, genesis []byte) (*compact.Range, []byte, error) {
	if _, err := tx.CreateBucket(bucketTree); err != nil {
		return nil, nil, err
	}
	r, edge0, err := appendTree(tx, treeFactory.NewEmptyRange(0), nil, [][32]byte{LeafHash(genesis)})
	if err != nil {
		return nil, nil, err
	}
	return r, edge0, tx.Bucket(bucketMeta).Put(metaTree, []byte(TreeLayout))
}

// loadTree rebuilds the writer's compact range of the first size entries
// from the right-edge tiles, and its level-0 edge from the last entries.
// It returns nil (and no error) for a ledger older than the tree, which
// has no meta "tree".
func loadTree(tx *bolt.Tx, size uint64) (*compact.Range, []byte, error) {
	meta := tx.Bucket(bucketMeta)
	layout := meta.Get(metaTree)
	if layout == nil {
		return nil, nil, nil
	}
	if string(layout) != TreeLayout {
		return nil, nil, fmt.Errorf("%w: meta tree %q (this opx keeps %s)", ErrFormat, layout, TreeLayout)
	}
	b := tx.Bucket(bucketTree)
	if b == nil {
		return nil, nil, fmt.Errorf("%w: meta names the tree but the tree bucket is gone", ErrTreeDamaged)
	}
	t := tileStore{b: b, entries: tx.Bucket(bucketEntries), size: size}
	// The tile at the right edge of each level above 0 holds exactly
	// what the size implies, and no tile lies beyond it: else the tree
	// and the entries disagree.
	for lvl := uint8(0); lvl < maxTileLvl; lvl++ {
		n := size >> (uint(lvl) * tileHeight) // nodes at this tile level
		stored := n / tileWidth               // full tiles
		if w := n % tileWidth; w > 0 && lvl > 0 {
			if got := len(b.Get(tileKey(lvl, stored))); got != int(w)*hashSize {
				return nil, nil, fmt.Errorf("%w: edge tile %d/%d holds %d bytes, the tree of %d entries needs %d",
					ErrTreeDamaged, lvl, stored, got, size, w*hashSize)
			}
			stored++
		}
		if k, _ := b.Cursor().Seek(tileKey(lvl, stored)); k != nil && k[0] == lvl {
			return nil, nil, fmt.Errorf("%w: tile %x lies beyond the tree of %d entries", ErrTreeDamaged, k, size)
		}
	}
	hs, err := t.rangeHashes(size)
	if err != nil {
		return nil, nil, err
	}
	r, err := treeFactory.NewRange(0, size, hs)
	if err != nil {
		return nil, nil, err
	}
	return r, t.tile(0, size/tileWidth), nil
}

// treeBuildBatch is how many entries one transaction of a tree build adds.
var treeBuildBatch = 1 << 16

// buildTree builds the tree of an older ledger from its entries, in
// transactions of treeBuildBatch entries, holding one batch's tiles at
// a time. The last one sets meta "tree"; a build cut short leaves no meta
// "tree", and the next open starts it again.
func (l *Ledger) buildTree(head uint64) (*compact.Range, []byte, error) {
	if err := l.db.Update(func(tx *bolt.Tx) error {
		if tx.Bucket(bucketTree) != nil {
			if err := tx.DeleteBucket(bucketTree); err != nil {
				return err
			}
		}
		_, err := tx.CreateBucket(bucketTree)
		return err
	}); err != nil {
		return nil, nil, fmt.Errorf("build tree: %w", err)
	}
	r := treeFactory.NewEmptyRange(0)
	var tw tileWriter // carries the level-0 edge across batches
	for r.End() <= head {
		err := l.db.Update(func(tx *bolt.Tx) error {
			b := tx.Bucket(bucketTree)
			var lh leafHasher
			c := tx.Bucket(bucketEntries).Cursor()
			k, v := c.Seek(seqKey(r.End()))
			for i := 0; i < treeBuildBatch && r.End() <= head; i++ {
				if k == nil || !bytes.Equal(k, seqKey(r.End())) {
					return fmt.Errorf("%w: entry %d is missing", ErrInconsistent, r.End())
				}
				leaf := lh.sum(v)
				if err := r.Append(leaf[:], tw.visit); err != nil {
					return err
				}
				k, v = c.Next()
			}
			if err := tw.flush(b); err != nil {
				return err
			}
			if r.End() > head {
				return tx.Bucket(bucketMeta).Put(metaTree, []byte(TreeLayout))
			}
			return nil
		})
		if err != nil {
			return nil, nil, fmt.Errorf("build tree: %w", err)
		}
	}
	return r, tw.edge0, nil
}

// prepareTree loads the tree for the writer (its compact range and
// level-0 edge), building it first for an older ledger; built reports
// that it was built (and must be recorded).
func (l *Ledger) prepareTree(head uint64) (r *compact.Range, edge0 []byte, built bool, err error) {
	if l.opts.noTree {
		return nil, nil, false, nil
	}
	err = l.view(func(tx *bolt.Tx) error {
		r, edge0, err = loadTree(tx, head+1)
		return err
	})
	if err != nil || r != nil {
		return r, edge0, false, err
	}
	if r, edge0, err = l.buildTree(head); err != nil {
		return nil, nil, false, err
	}
	return r, edge0, true, nil
}

// recordTreeBuilt appends the ledger.tree_built entry of a tree just built.
func (l *Ledger) recordTreeBuilt() error {
	_, err := l.w.appendAtHead(Sync, func(at atHead) (Record, error) {
		return Record{Type: TypeTreeBuilt, Data: TreeBuiltPayload{TreeSize: at.tree.Size, TreeRoot: EncodeTreeRoot(at.tree.Root)}}, nil
	})
	return err
}

// leafHashes hashes entries as tree leaves.
func leafHashes(entries [][]byte) [][32]byte {
	var lh leafHasher
	out := make([][32]byte, len(entries))
	for i, raw := range entries {
		out[i] = lh.sum(raw)
	}
	return out
}
