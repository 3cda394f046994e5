package ledger

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/transparency-dev/merkle/compact"
	"github.com/transparency-dev/merkle/rfc6962"
	bolt "go.etcd.io/bbolt"
)

// Verify recomputes the tree from the entries and checks it against what
// the ledger holds: every stored tile, byte for byte (a store), and every
// root the entries record (ledger.checkpoint tree fields,
// ledger.tree_built), in a store or a stream alike.
//
// The work is split like the chain check. Each chunk worker hashes its
// chunk's leaves into a compact range of its own, compares the nodes it
// completes at heights 0 and 8 with the tiles the feeder handed it, and
// keeps, for each entry recording a tree, the range up to that entry.
// The joiner merges the ranges in order (a few hashes per chunk), which
// gives the root at each recording entry, and gathers the nodes completed
// across chunks (heights 16 and up, one in 65536 leaves), which are
// compared with their tiles at the end, with the shape of the tiles (each
// tile of the tree present, of its width, and nothing else).

// chunkTiles are the stored tiles at levels 0 and 1 covering a chunk.
type chunkTiles struct {
	base  [2]uint64   // index of the first tile at each level
	tiles [2][][]byte // consecutive tiles from base (nil when absent)
}

// treeNode is a node at a height that is a multiple of 8, to compare with
// its tile.
type treeNode struct {
	id   compact.NodeID
	hash []byte
}

// treeMark is an entry that records a tree: its fields and the chunk's
// range up to (not including) it.
type treeMark struct {
	leaf   uint64 // the entry's leaf index
	typ    string
	size   uint64
	root   string
	note   string
	prefix *compact.Range
}

// chunkTree is what a worker computed of the tree over its chunk.
type chunkTree struct {
	gap   bool // the chunk's keys are not contiguous: no tree beyond it
	rng   *compact.Range
	nodes []treeNode // to compare at the end (tiles not handed to the worker)
	marks []treeMark
	dirty dirtySet
}

// dirtySet marks, for each stored hash found wrong, the nodes above it
// in the tile levels above: those differ as a consequence, and are not
// reported again (a flipped entry is one finding, not one per level).
type dirtySet map[[2]uint64]bool

func (d *dirtySet) mark(id compact.NodeID) {
	if *d == nil {
		*d = dirtySet{}
	}
	lvl := uint64(id.Level / tileHeight)
	for up := lvl + 1; up < maxTileLvl; up++ {
		(*d)[[2]uint64{up, id.Index >> ((up - lvl) * tileHeight)}] = true
	}
}

func (d dirtySet) has(id compact.NodeID) bool {
	return d[[2]uint64{uint64(id.Level / tileHeight), id.Index}]
}

// treeCheck is the checker's state of the tree, guarded by checker.mu.
type treeCheck struct {
	rng       *compact.Range // the tree so far; nil once it cannot be computed
	tiles     *tileStore     // a store's tiles, read by the feeder; nil for a stream
	nodes     []treeNode     // completed across chunks, to compare at the end
	dirty     dirtySet       // nodes above a wrong stored hash
	recorded  bool           // an entry recorded a tree
	unchecked uint64         // recorded roots that could not be checked
}

// newTreeCheck starts the tree at from: empty at genesis, else from the
// compact range the caller gives (nil: the tree is not computed).
func newTreeCheck(from uint64, hashes [][]byte) (*treeCheck, error) {
	if from == 0 {
		return &treeCheck{rng: treeFactory.NewEmptyRange(0)}, nil
	}
	if hashes == nil {
		return &treeCheck{}, nil
	}
	for i, h := range hashes {
		if len(h) != hashSize {
			return nil, fmt.Errorf("tree range hash %d is %d bytes, not %d", i, len(h), hashSize)
		}
	}
	r, err := treeFactory.NewRange(0, from, hashes)
	if err != nil {
		return nil, fmt.Errorf("tree range at %d: %w", from, err)
	}
	return &treeCheck{rng: r}, nil
}

// useStoreTiles makes the checker compare the tree with the store's tiles
// (read in tx by the feeder) and check their shape when it finishes.
func (c *checker) useStoreTiles(tx *bolt.Tx) {
	b := tx.Bucket(bucketTree)
	meta := tx.Bucket(bucketMeta)
	c.treeEnd = func() []*IntegrityError { return c.finishStoreTree(b, meta) }
	if b != nil && meta != nil && string(meta.Get(metaTree)) == TreeLayout {
		c.tree.tiles = &tileStore{b: b} // stored tiles only: the level-0 edge is the entries'

	}
}

// attachTiles hands a chunk the level-0 and level-1 tiles covering it.
// It runs on the feeder's goroutine, which owns the transaction.
func (c *checker) attachTiles(ch *chunk) {
	if c.tree == nil || c.tree.tiles == nil || len(ch.items) == 0 {
		return
	}
	first, last := ch.items[0].key, ch.items[len(ch.items)-1].key
	if last < first || last-first >= uint64(len(ch.items)) {
		return // keys not contiguous: the tree stops at the gap anyway
	}
	ct := &chunkTiles{}
	for lvl := range ct.tiles {
		shift := uint(lvl * tileHeight)
		lo, hi := (first>>shift)/tileWidth, (last>>shift)/tileWidth
		ct.base[lvl] = lo
		for ti := lo; ti <= hi; ti++ {
			tile := c.tree.tiles.b.Get(tileKey(uint8(lvl), ti))
			if lvl == 0 && len(tile) != fullTileSz {
				tile = nil // level 0 stores full tiles only: the shape check reports another
			}
			ct.tiles[lvl] = append(ct.tiles[lvl], tile)
		}
	}
	ch.tiles = ct
}

// treeChunk computes the chunk's part of the tree; it runs in a worker.
// leaves are the chunk's leaf hashes; types, datas and seqs those of its
// entries ("", nil and 0 where an entry does not parse).
func (c *checker) treeChunk(ch chunk, leaves [][32]byte, types []string, datas [][]byte, seqs []uint64, res *chunkResult) {
	if c.tree == nil || len(ch.items) == 0 {
		return
	}
	begin := ch.items[0].key
	ct := &chunkTree{rng: treeFactory.NewEmptyRange(begin)}
	res.tree = ct
	// Leaf i is the entry at position i: where keys (a store) or the
	// entries' own seqs (a stream, where a line may be missing) say
	// otherwise, the tree stops; the chain check reports why.
	for i, it := range ch.items {
		if it.key != begin+uint64(i) || (c.stream && types[i] != "" && seqs[i] != begin+uint64(i)) {
			ct.gap = true
			return
		}
	}
	var visit compact.VisitFn
	if c.tree.tiles != nil {
		visit = func(id compact.NodeID, h []byte) { c.visitTile(ch.tiles, ct, id, h, res) }
	}
	if r, ok := perfectSubtree(begin, leaves, types, visit); ok {
		ct.rng = r
		return
	}
	slab := nodeSlabs.Get().(*nodeSlab)
	defer slab.release()
	ct.rng = slab.f.NewEmptyRange(begin)
	for i := range leaves {
		if types[i] == TypeCheckpoint || types[i] == TypeTreeBuilt {
			if m, ok := parseTreeMark(types[i], datas[i]); ok {
				m.leaf, m.prefix = begin+uint64(i), ownRange(ct.rng)
				ct.marks = append(ct.marks, m)
			}
		}
		ct.rng.Append(leaves[i][:], visit)
	}
	ct.rng = ownRange(ct.rng)
}

// nodeSlab gives the inner nodes a chunk's range computes their bytes
// from one buffer, reused chunk after chunk, where treeHasher allocates
// 32 bytes for each. Nothing may keep them past the chunk: the ranges
// kept are copied out (ownRange) and visitTile copies what it keeps.
type nodeSlab struct {
	buf []byte
	f   compact.RangeFactory
}

var nodeSlabs = sync.Pool{New: func() any {
	s := new(nodeSlab)
	s.f.Hash = s.hashChildren
	return s
}}

func (s *nodeSlab) hashChildren(l, r []byte) []byte {
	h := treeHasher.sum(l, r)
	if len(s.buf)+hashSize > cap(s.buf) {
		// The nodes handed out so far stay in the old buffer.
		s.buf = make([]byte, 0, max(2*cap(s.buf), chunkSize*hashSize))
	}
	n := len(s.buf)
	s.buf = append(s.buf, h[:]...)
	return s.buf[n : n+hashSize : n+hashSize]
}

func (s *nodeSlab) release() {
	s.buf = s.buf[:0]
	nodeSlabs.Put(s)
}

// ownRange is a copy of r, hashes included, built by treeFactory: it
// shares no bytes with r (a chunk's nodeSlab).
func ownRange(r *compact.Range) *compact.Range {
	hs := make([][]byte, len(r.Hashes()))
	flat := make([]byte, len(hs)*hashSize)
	for i, h := range r.Hashes() {
		hs[i] = flat[i*hashSize : (i+1)*hashSize : (i+1)*hashSize]
		copy(hs[i], h)
	}
	c, err := treeFactory.NewRange(r.Begin(), r.End(), hs)
	if err != nil {
		panic(err) // a copy of a valid range is valid
	}
	return c
}

// perfectSubtree is the compact range of a chunk that is one perfect
// subtree of the tree (a power of two of leaves, below 2^16, starting at
// a multiple of it) and records no tree (no entry needs the range up to
// it): the range holds just the subtree's root, what appending the leaves
// one by one gives, here computed in place in leaves (which it
// overwrites) without a compact.Range step or an allocation for each
// node. visit, if set, sees what appending shows of the tiles' heights,
// in the same order: the leaves, and after each 256 of them the node at
// height 8 over them. ok is false for any other chunk, leaves untouched.
func perfectSubtree(begin uint64, leaves [][32]byte, types []string, visit compact.VisitFn) (*compact.Range, bool) {
	n := uint64(len(leaves))
	if n == 0 || n&(n-1) != 0 || n >= 1<<(2*tileHeight) || begin%n != 0 {
		return nil, false
	}
	for _, typ := range types {
		if typ == TypeCheckpoint || typ == TypeTreeBuilt {
			return nil, false
		}
	}
	block := min(n, 1<<tileHeight)
	for b := uint64(0); b < n; b += block {
		blk := leaves[b : b+block]
		if visit != nil {
			for i := range blk {
				visit(compact.NodeID{Level: 0, Index: begin + b + uint64(i)}, blk[i][:])
			}
		}
		hashUp(blk)
		leaves[b/block] = blk[0] // b/block <= b: a block already hashed
		if visit != nil && block == 1<<tileHeight {
			visit(compact.NodeID{Level: tileHeight, Index: (begin + b) >> tileHeight}, leaves[b/block][:])
		}
	}
	top := leaves[:n/block]
	hashUp(top)
	root := top[0]
	r, err := treeFactory.NewRange(begin, begin+n, [][]byte{root[:]})
	if err != nil {
		panic(err) // one perfect subtree is a valid range
	}
	return r, true
}

// hashUp puts in hs[0] the root of the perfect tree over the nodes hs (a
// power of two of them, all at one height), overwriting hs on the way.
func hashUp(hs [][32]byte) {
	var buf [1 + 2*hashSize]byte
	buf[0] = rfc6962.RFC6962NodeHashPrefix
	for w := len(hs); w > 1; w /= 2 {
		for j := 0; j < w/2; j++ {
			copy(buf[1:], hs[2*j][:])
			copy(buf[1+hashSize:], hs[2*j+1][:])
			hs[j] = sha256.Sum256(buf[:])
		}
	}
}

// visitTile compares a node a worker completed with the tile handed to
// it, or keeps it for the end when it has none.
func (c *checker) visitTile(tiles *chunkTiles, ct *chunkTree, id compact.NodeID, h []byte, res *chunkResult) {
	if id.Level%tileHeight != 0 {
		return
	}
	lvl := id.Level / tileHeight
	if tiles != nil && lvl < 2 {
		ti := id.Index / tileWidth
		if j := ti - tiles.base[lvl]; ti >= tiles.base[lvl] && j < uint64(len(tiles.tiles[lvl])) {
			tile, off := tiles.tiles[lvl][j], id.Index%tileWidth
			if uint64(len(tile)) >= (off+1)*hashSize { // a short tile is reported by the shape check
				if got := tile[off*hashSize : (off+1)*hashSize]; !bytes.Equal(got, h) {
					if !ct.dirty.has(id) {
						res.push(tileFailure(id, got, h))
					}
					ct.dirty.mark(id)
				}
			}
			return
		}
	}
	ct.nodes = append(ct.nodes, treeNode{id, bytes.Clone(h)})
}

// parseTreeMark reads the tree fields of a ledger.checkpoint or
// ledger.tree_built entry; false when it records no tree (a checkpoint
// written before the tree). Malformed fields are left to the strict
// payload check, but still compared: a root that is not base64 differs.
func parseTreeMark(typ string, data []byte) (treeMark, bool) {
	var f struct {
		TreeSize uint64 `json:"tree_size"`
		TreeRoot string `json:"tree_root"`
		Note     string `json:"note"`
	}
	if json.Unmarshal(data, &f) != nil || (typ == TypeCheckpoint && f.TreeRoot == "" && f.TreeSize == 0) {
		return treeMark{}, false
	}
	return treeMark{typ: typ, size: f.TreeSize, root: f.TreeRoot, note: f.Note}, true
}

func tileFailure(id compact.NodeID, stored, computed []byte) *IntegrityError {
	lvl, off := id.Level/tileHeight, id.Index%tileWidth
	return &IntegrityError{Seq: id.Index << id.Level, Kind: KindTreeMismatch,
		Detail: fmt.Sprintf("tile %d/%d hash %d (the node over entries %d..) is %x, the entries hash to %x",
			lvl, id.Index/tileWidth, off, id.Index<<id.Level, stored, computed),
		Expected: fmt.Sprintf("%x", computed), Found: fmt.Sprintf("%x", stored)}
}

// joinTree merges a chunk's tree into the checker's, in chunk order,
// checking the roots its entries record. Called with c.mu held.
func (c *checker) joinTree(ct *chunkTree) {
	t := c.tree
	if t == nil || ct == nil {
		return
	}
	for _, m := range ct.marks {
		if m.typ == TypeTreeBuilt && t.recorded {
			c.rep.add(&IntegrityError{Seq: m.leaf, Kind: KindTreeMismatch,
				Detail: "ledger.tree_built after an entry that recorded the tree: the tree was lost and built again"})
		}
		t.recorded = true
		c.checkMark(m)
	}
	if t.rng == nil {
		return
	}
	if ct.gap || ct.rng.Begin() != t.rng.End() {
		t.rng = nil // a gap or a duplicate, reported by the chain check
		return
	}
	t.nodes = append(t.nodes, ct.nodes...)
	for k := range ct.dirty {
		if t.dirty == nil {
			t.dirty = dirtySet{}
		}
		t.dirty[k] = true
	}
	var visit compact.VisitFn
	if t.tiles != nil {
		visit = func(id compact.NodeID, h []byte) {
			if id.Level%tileHeight == 0 {
				t.nodes = append(t.nodes, treeNode{id, bytes.Clone(h)})
			}
		}
	}
	if err := t.rng.AppendRange(ct.rng, visit); err != nil {
		t.rng = nil
	}
}

// checkMark compares a recorded tree with the computed one: its size must
// be its own seq (the tree of the entries before it), its root the root
// of that tree.
func (c *checker) checkMark(m treeMark) {
	t := c.tree
	if t.rng == nil || m.prefix.Begin() != t.rng.End() {
		t.unchecked++
		return
	}
	if m.size != m.leaf {
		c.rep.add(&IntegrityError{Seq: m.leaf, Kind: KindTreeMismatch,
			Detail:   fmt.Sprintf("%s records tree_size %d, but it covers the %d entries before it", m.typ, m.size, m.leaf),
			Expected: fmt.Sprint(m.leaf), Found: fmt.Sprint(m.size)})
		return
	}
	r := cloneRange(t.rng)
	if err := r.AppendRange(m.prefix, nil); err != nil {
		t.unchecked++
		return
	}
	th := TreeHead{Size: m.size, Root: rootOf(r.Hashes())}
	if want := EncodeTreeRoot(th.Root); m.root != want {
		found := m.root
		if len(found) > 64 {
			found = found[:64] + "…" // outside input: quote a bounded part
		}
		c.rep.add(&IntegrityError{Seq: m.leaf, Kind: KindTreeMismatch,
			Detail:   fmt.Sprintf("%s records tree root %q for %d entries, the entries give %s", m.typ, found, m.size, want),
			Expected: want, Found: found})
		return
	}
	if m.typ == TypeCheckpoint && c.opts.CheckCheckpoint != nil {
		if err := c.opts.CheckCheckpoint(m.leaf, th, m.note); err != nil {
			c.rep.add(&IntegrityError{Seq: m.leaf, Kind: KindCheckpoint, Detail: err.Error()})
		}
	}
}

// finishStoreTree checks, at the end of a store's verify, the tiles the
// workers could not: the nodes completed across chunks, and the shape of
// the tree bucket for the computed tree.
func (c *checker) finishStoreTree(b, meta *bolt.Bucket) []*IntegrityError {
	t := c.tree
	var out []*IntegrityError
	fail := func(seq uint64, detail string) {
		out = append(out, &IntegrityError{Seq: seq, Kind: KindTreeMismatch, Detail: detail})
	}
	marked := meta != nil && meta.Get(metaTree) != nil
	switch {
	case b == nil && (marked || t.recorded):
		fail(0, "the tree bucket is gone, though the ledger keeps a tree (meta tree or a recorded root)")
		return out
	case b == nil:
		return nil // older than the tree: the recorded roots, if any, were checked
	case !marked && t.recorded:
		fail(0, "meta tree is gone, though entries record the tree")
		return out
	case !marked:
		return nil // a build cut short: the next writable open builds it again
	case string(meta.Get(metaTree)) != TreeLayout:
		fail(0, fmt.Sprintf("meta tree %q is not %s", meta.Get(metaTree), TreeLayout))
		return out
	case t.rng == nil:
		return nil // the entries are not contiguous: the chain check says where
	}
	size := t.rng.End()
	// at is the seq a tile finding is reported at: the first entry under
	// node idx of tile level lvl, or the last entry when that is beyond.
	at := func(lvl uint8, idx uint64) uint64 {
		seq := idx << (uint(lvl) * tileHeight)
		if size == 0 || idx > (size-1)>>(uint(lvl)*tileHeight) {
			return max(size, 1) - 1
		}
		return seq
	}
	// Lowest first, so that a wrong hash hides the ones above it.
	slices.SortFunc(t.nodes, func(a, b treeNode) int { return cmp.Compare(a.id.Level, b.id.Level) })
	for _, n := range t.nodes {
		lvl := n.id.Level / tileHeight
		tile := b.Get(tileKey(uint8(lvl), n.id.Index/tileWidth))
		off := n.id.Index % tileWidth
		if uint64(len(tile)) >= (off+1)*hashSize {
			if got := tile[off*hashSize : (off+1)*hashSize]; !bytes.Equal(got, n.hash) {
				if !t.dirty.has(n.id) {
					out = append(out, tileFailure(n.id, got, n.hash))
				}
				t.dirty.mark(n.id)
			}
		}
	}
	// Every tile of the tree of size entries, of its width, and no other.
	var next [maxTileLvl]uint64
	cur := b.Cursor()
	for k, v := cur.First(); k != nil; k, v = cur.Next() {
		lvl, idx, ok := parseTileKey(k)
		if !ok {
			fail(size-1, fmt.Sprintf("tree bucket key %x is not a tile", k))
			continue
		}
		nodes := size >> (uint(lvl) * tileHeight)
		want := min(tileWidth, nodes-min(nodes, idx*tileWidth))
		if lvl == 0 && want < tileWidth {
			want = 0 // the level-0 edge tile is the entries' leaf hashes: never stored
		}
		if n := min(idx, storedTiles(lvl, size)); n > next[lvl] {
			fail(at(lvl, next[lvl]*tileWidth), fmt.Sprintf("tiles %d/%d..%d/%d are missing", lvl, next[lvl], lvl, n-1))
		}
		next[lvl] = idx + 1
		switch {
		case want == 0:
			fail(at(lvl, idx*tileWidth), fmt.Sprintf("tile %d/%d lies beyond the tree of %d entries", lvl, idx, size))
		case uint64(len(v)) != want*hashSize:
			// Reported where the tile and the tree part: the first hash
			// one has and the other has not.
			fail(at(lvl, idx*tileWidth+min(uint64(len(v))/hashSize, want)),
				fmt.Sprintf("tile %d/%d holds %d bytes, the tree of %d entries needs %d", lvl, idx, len(v), size, want*hashSize))
		}
	}
	for lvl := range next {
		if n := storedTiles(uint8(lvl), size); next[lvl] < n {
			fail(at(uint8(lvl), next[lvl]*tileWidth), fmt.Sprintf("tiles %d/%d..%d/%d are missing", lvl, next[lvl], lvl, n-1))
		}
	}
	return out
}

// EncodeTreeRange is a compact range as Manifest.TreeRange holds it: the
// hashes concatenated, in standard base64.
func EncodeTreeRange(hashes [][]byte) string {
	return base64.StdEncoding.EncodeToString(bytes.Join(hashes, nil))
}

// decodeTreeRange parses a manifest's tree_range: at most 64 hashes (a
// compact range of a 64-bit tree), in standard base64.
func decodeTreeRange(s string) ([][]byte, error) {
	if len(s) > base64.StdEncoding.EncodedLen(64*hashSize) {
		return nil, fmt.Errorf("%d characters: a compact range holds at most 64 hashes", len(s))
	}
	// Strict still skips CR and LF: only the exact encoding is taken.
	b, err := base64.StdEncoding.Strict().DecodeString(s)
	if err != nil || len(b)%hashSize != 0 || base64.StdEncoding.EncodeToString(b) != s {
		return nil, fmt.Errorf("not the standard base64 of 32-byte hashes")
	}
	out := make([][]byte, len(b)/hashSize)
	for i := range out {
		out[i] = b[i*hashSize : (i+1)*hashSize]
	}
	return out, nil
}

// storedTiles is how many tiles level lvl of a tree of size entries
// stores: its full tiles, and above level 0 the partial one at the edge.
func storedTiles(lvl uint8, size uint64) uint64 {
	nodes := size >> (uint(lvl) * tileHeight)
	if lvl == 0 {
		return nodes / tileWidth
	}
	return (nodes + tileWidth - 1) / tileWidth
}
