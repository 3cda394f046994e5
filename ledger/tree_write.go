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
		return [32]byte{}, fmt.Errorf("tree root %q is not the base64 of 32 bytes", s)
	}
	return [32]byte(b), nil
}

// tileWriter gathers the nodes a compact range reports as it grows (the
// ones at heights that are multiples of 8) and writes them into their
// tiles: full tiles once, the partial tile at the right edge of each level
// rewritten as it grows.
type tileWriter struct {
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
	for lvl := range tw.pending {
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

// appendTree adds leaves (hashed by the appenders, off the committer) to
// a copy of r, writes the completed nodes into the tree bucket of tx, and
// returns the copy.
func appendTree(tx *bolt.Tx, r *compact.Range, leaves [][32]byte) (*compact.Range, error) {
	b := tx.Bucket(bucketTree)
	if b == nil {
		return nil, fmt.Errorf("%w: no tree bucket", ErrTreeDamaged)
	}
	out := cloneRange(r)
	var tw tileWriter
	for i := range leaves {
		if err := out.Append(leaves[i][:], tw.visit); err != nil {
			return nil, err
		}
	}
	if err := tw.flush(b); err != nil {
		return nil, err
	}
	return out, nil
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
func createTree(tx *bolt.Tx, genesis []byte) (*compact.Range, error) {
	if _, err := tx.CreateBucket(bucketTree); err != nil {
		return nil, err
	}
	r, err := appendTree(tx, treeFactory.NewEmptyRange(0), [][32]byte{LeafHash(genesis)})
	if err != nil {
		return nil, err
	}
	return r, tx.Bucket(bucketMeta).Put(metaTree, []byte(TreeLayout))
}

// loadTree rebuilds the writer's compact range of the first size entries
// from the right-edge tiles. It returns nil (and no error) for a ledger
// older than the tree, which has no meta "tree".
func loadTree(tx *bolt.Tx, size uint64) (*compact.Range, error) {
	meta := tx.Bucket(bucketMeta)
	layout := meta.Get(metaTree)
	if layout == nil {
		return nil, nil
	}
	if string(layout) != TreeLayout {
		return nil, fmt.Errorf("%w: meta tree %q (this opx keeps %s)", ErrFormat, layout, TreeLayout)
	}
	b := tx.Bucket(bucketTree)
	if b == nil {
		return nil, fmt.Errorf("%w: meta names the tree but the tree bucket is gone", ErrTreeDamaged)
	}
	t := tileStore{b}
	// The tile at the right edge of each level holds exactly what the
	// size implies; a longer or shorter one means the tree and the
	// entries disagree.
	for lvl := uint(0); lvl < maxTileLvl; lvl++ {
		n := size >> (lvl * tileHeight) // nodes at this tile level
		if n == 0 {
			break
		}
		if w := n % tileWidth; w > 0 {
			if got := len(b.Get(tileKey(uint8(lvl), n/tileWidth))); got != int(w)*hashSize {
				return nil, fmt.Errorf("%w: edge tile %d/%d holds %d bytes, the tree of %d entries needs %d",
					ErrTreeDamaged, lvl, n/tileWidth, got, size, w*hashSize)
			}
		}
		if k, _ := b.Cursor().Seek(tileKey(uint8(lvl), (n+tileWidth-1)/tileWidth)); k != nil && k[0] == uint8(lvl) {
			return nil, fmt.Errorf("%w: tile %x lies beyond the tree of %d entries", ErrTreeDamaged, k, size)
		}
	}
	hs, err := t.rangeHashes(size)
	if err != nil {
		return nil, err
	}
	return treeFactory.NewRange(0, size, hs)
}

// treeBuildBatch is how many entries one transaction of a tree build adds.
var treeBuildBatch = 1 << 16

// buildTree builds the tree of an older ledger from its entries, in
// transactions of treeBuildBatch entries, holding one batch's tiles at
// a time. The last one sets meta "tree"; a build cut short leaves no meta
// "tree", and the next open starts it again.
func (l *Ledger) buildTree(head uint64) (*compact.Range, error) {
	if err := l.db.Update(func(tx *bolt.Tx) error {
		if tx.Bucket(bucketTree) != nil {
			if err := tx.DeleteBucket(bucketTree); err != nil {
				return err
			}
		}
		_, err := tx.CreateBucket(bucketTree)
		return err
	}); err != nil {
		return nil, fmt.Errorf("build tree: %w", err)
	}
	r := treeFactory.NewEmptyRange(0)
	for r.End() <= head {
		err := l.db.Update(func(tx *bolt.Tx) error {
			b := tx.Bucket(bucketTree)
			var tw tileWriter
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
			return nil, fmt.Errorf("build tree: %w", err)
		}
	}
	return r, nil
}

// prepareTree loads the tree for the writer, building it first for an
// older ledger; built reports that it was built (and must be recorded).
func (l *Ledger) prepareTree(head uint64) (r *compact.Range, built bool, err error) {
	if l.opts.noTree {
		return nil, false, nil
	}
	err = l.view(func(tx *bolt.Tx) error {
		r, err = loadTree(tx, head+1)
		return err
	})
	if err != nil || r != nil {
		return r, false, err
	}
	r, err = l.buildTree(head)
	return r, err == nil, err
}

// recordTreeBuilt appends the ledger.tree_built entry of a tree just built.
func (l *Ledger) recordTreeBuilt() error {
	_, err := l.w.appendAtHead(Sync, func(at atHead) (Record, error) {
		return Record{Type: TypeTreeBuilt, Data: TreeBuiltPayload{TreeSize: at.tree.Size, TreeRoot: EncodeTreeRoot(at.tree.Root)}}, nil
	})
	return err
}
