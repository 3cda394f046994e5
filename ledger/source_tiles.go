package ledger

import (
	"bytes"
	"fmt"
	"os"

	bolt "go.etcd.io/bbolt"
)

// TileSource is a Source that also serves the ledger's stored Merkle tree
// tiles, so that VerifySource compares the tree it computes from the
// entries with the stored one, as Verify does.
type TileSource interface {
	// TreeLayout returns what the ledger's meta names as its tree layout
	// ("" for none) and whether it holds a tree bucket.
	TreeLayout() (layout string, bucket bool, err error)
	// Tiles calls fn with the key and bytes of each stored tile of the
	// tree of size entries, in key order: a tile is cut to the width that
	// tree needs (the ledger may have grown since), one stored shorter is
	// given as stored, and one beyond that tree is left out.
	Tiles(size uint64, fn func(key, tile []byte) error) error
}

// tilesBatch is how many tiles one read transaction of localSource reads.
const tilesBatch = 256

// cutTile is the stored tile v at key as the tree of size entries has
// it; ok is false for a tile beyond that tree.
func cutTile(size uint64, key, v []byte) (tile []byte, ok bool) {
	lvl, idx, isTile := parseTileKey(key)
	if !isTile {
		return v, true
	}
	nodes := size >> (uint(lvl) * tileHeight)
	want := min(tileWidth, nodes-min(nodes, idx*tileWidth))
	if lvl == 0 && want < tileWidth {
		want = 0 // the level-0 edge tile is never stored: it is the entries' leaf hashes
	}
	if want == 0 {
		return nil, false
	}
	if uint64(len(v)) > want*hashSize {
		v = v[:want*hashSize]
	}
	return v, true
}

func (s localSource) TreeLayout() (layout string, bucket bool, err error) {
	err = s.l.view(func(tx *bolt.Tx) error {
		layout = string(tx.Bucket(bucketMeta).Get(metaTree))
		bucket = tx.Bucket(bucketTree) != nil
		return nil
	})
	return layout, bucket, err
}

func (s localSource) Tiles(size uint64, fn func(key, tile []byte) error) error {
	var after []byte
	for {
		type kv struct{ k, v []byte }
		var batch []kv
		err := s.l.view(func(tx *bolt.Tx) error {
			b := tx.Bucket(bucketTree)
			if b == nil {
				return nil
			}
			c := b.Cursor()
			k, v := c.First()
			if after != nil {
				if k, v = c.Seek(after); k != nil && bytes.Equal(k, after) {
					k, v = c.Next()
				}
			}
			for ; k != nil && len(batch) < tilesBatch; k, v = c.Next() {
				if t, ok := cutTile(size, k, v); ok {
					batch = append(batch, kv{bytes.Clone(k), bytes.Clone(t)})
				}
				after = bytes.Clone(k)
			}
			return nil
		})
		if err != nil {
			return err
		}
		if len(batch) == 0 && (after == nil || !s.moreTiles(after)) {
			return nil
		}
		for _, t := range batch {
			if err := fn(t.k, t.v); err != nil {
				return err
			}
		}
	}
}

// moreTiles reports whether the tree bucket holds a key after k.
func (s localSource) moreTiles(k []byte) bool {
	more := false
	s.l.view(func(tx *bolt.Tx) error {
		if b := tx.Bucket(bucketTree); b != nil {
			c := b.Cursor()
			got, _ := c.Seek(k)
			if got != nil && bytes.Equal(got, k) {
				got, _ = c.Next()
			}
			more = got != nil
		}
		return nil
	})
	return more
}

// maxTreeKeys bounds the tiles a TileSource may hand over for a tree of
// size entries: every tile of every level, and as many stray keys again.
func maxTreeKeys(size uint64) uint64 {
	var n uint64
	for lvl := 0; lvl < maxTileLvl; lvl++ {
		n += (size>>(uint(lvl)*tileHeight) + tileWidth - 1) / tileWidth
	}
	return 2*n + 64
}

// strayTileBytes is what a TileSource may hand over beyond the bytes the
// tree needs: room for a few stray or damaged keys for the checker to
// report.
const strayTileBytes = 64 * fullTileSz

// maxTreeBytes bounds the tile bytes a TileSource may hand over for a tree
// of size entries: exactly what that tree's stored tiles hold (full
// level-0 tiles, every node of the higher levels, 32 bytes a hash: about
// 32 bytes an entry), and strayTileBytes. Tiles cut to the tree never
// exceed it, so only a source that sends junk is refused.
func maxTreeBytes(size uint64) uint64 {
	n := size / tileWidth * fullTileSz
	for lvl := 1; lvl < maxTileLvl; lvl++ {
		n += size >> (uint(lvl) * tileHeight) * hashSize
	}
	return n + strayTileBytes
}

// tileCopyBatch and tileCopyBatchBytes bound the tiles one transaction of
// a tileCopy writes: bbolt keeps a transaction's dirty pages in memory
// until it commits, so the copy commits at whichever comes first.
const (
	tileCopyBatch      = 512
	tileCopyBatchBytes = 4 << 20
)

// tileCopy holds a TileSource's tiles for one verify in a temporary bbolt
// file (the checker reads tiles by key as the entries go by, and walks
// them all at the end, as it does in the ledger's own file). It is
// written in transactions of at most tileCopyBatch tiles or
// tileCopyBatchBytes, so its memory stays bounded whatever the source
// sends; its disk is bounded by maxTreeBytes of the head the source
// names, about 32 bytes an entry, and the source must then deliver those
// entries or the verify fails.
type tileCopy struct {
	db   *bolt.DB
	tx   *bolt.Tx
	path string
}

func newTileCopy(src TileSource, size uint64) (_ *tileCopy, err error) {
	layout, bucket, err := src.TreeLayout()
	if err != nil {
		return nil, err
	}
	f, err := os.CreateTemp("", "opx-verify-tiles-*.db")
	if err != nil {
		return nil, err
	}
	f.Close()
	t := &tileCopy{path: f.Name()}
	defer func() {
		if err != nil {
			t.close()
		}
	}()
	if t.db, err = bolt.Open(t.path, 0o600, &bolt.Options{NoSync: true}); err != nil {
		return nil, err
	}
	err = t.db.Update(func(tx *bolt.Tx) error {
		meta, err := tx.CreateBucket(bucketMeta)
		if err != nil {
			return err
		}
		if layout != "" {
			if err := meta.Put(metaTree, []byte(layout)); err != nil {
				return err
			}
		}
		if bucket {
			_, err = tx.CreateBucket(bucketTree)
		}
		return err
	})
	if err == nil && bucket {
		err = t.copyTiles(src, size)
	}
	if err != nil {
		return nil, fmt.Errorf("tree tiles: %w", err)
	}
	if t.tx, err = t.db.Begin(false); err != nil {
		return nil, err
	}
	return t, nil
}

// copyTiles writes src's tiles of the tree of size entries into the
// copy's tree bucket, a batch a transaction, refusing a source that hands
// over more keys than maxTreeKeys or more bytes than maxTreeBytes.
func (t *tileCopy) copyTiles(src TileSource, size uint64) error {
	type kv struct{ k, v []byte }
	var (
		batch      []kv
		batchBytes int
		n, total   uint64
	)
	keys, limit := maxTreeKeys(size), maxTreeBytes(size)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := t.db.Update(func(tx *bolt.Tx) error {
			b := tx.Bucket(bucketTree)
			for _, e := range batch {
				if err := b.Put(e.k, e.v); err != nil {
					return err
				}
			}
			return nil
		})
		batch, batchBytes = batch[:0], 0
		return err
	}
	err := src.Tiles(size, func(key, tile []byte) error {
		if n++; n > keys {
			return fmt.Errorf("more than %d tree tiles for a tree of %d entries", keys, size)
		}
		if len(key) == 0 || len(key) > tileKeyLen*4 || len(tile) > fullTileSz {
			return fmt.Errorf("a tree tile of %d bytes under a key of %d bytes: not a tile", len(tile), len(key))
		}
		if total += uint64(len(tile)); total > limit {
			return fmt.Errorf("more than %d bytes of tree tiles for a tree of %d entries", limit, size)
		}
		batch = append(batch, kv{bytes.Clone(key), bytes.Clone(tile)})
		if batchBytes += len(key) + len(tile); len(batch) >= tileCopyBatch || batchBytes >= tileCopyBatchBytes {
			return flush()
		}
		return nil
	})
	if err != nil {
		return err
	}
	return flush()
}

func (t *tileCopy) close() {
	if t.tx != nil {
		t.tx.Rollback()
	}
	if t.db != nil {
		t.db.Close()
	}
	os.Remove(t.path)
}
