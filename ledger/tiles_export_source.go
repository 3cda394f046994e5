package ledger

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/transparency-dev/merkle/compact"
)

// ExportTilesSource is ExportTiles for a ledger read from src (a running
// engine's, through its LedgerService): the same files, computed here from
// the entries src hands over rather than read from stored tiles. One pass
// finds the latest signed checkpoint up to src's head and the key recorded
// before it; a second hashes the leaves of that checkpoint's tree, writing
// each tile and entry bundle as it completes, and the root they make must
// be the signed one, or nothing is written. It holds at most one tile and
// one entry bundle per level, whatever the ledger's size.
func ExportTilesSource(src Source, dir string) (*TilesExport, error) {
	if _, err := os.Lstat(dir); err == nil {
		return nil, fmt.Errorf("export tiles: %s already exists", dir)
	}
	head, err := src.Head()
	if err != nil {
		return nil, fmt.Errorf("export tiles: %w", err)
	}
	sc, ok, err := sourceSignedCheckpoint(src, head.Seq)
	cp, err := openTilesCheckpoint(sc, ok, err)
	if err != nil {
		return nil, err
	}
	if cp.Size == 0 || cp.Size > head.Seq+1 {
		return nil, fmt.Errorf("export tiles refused: checkpoint at %d is of tree %d, the ledger has %d entries: %w",
			sc.seq, cp.Size, head.Seq+1, ErrIntegrity)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".opx-tiles-*")
	if err != nil {
		return nil, fmt.Errorf("export tiles: %w", err)
	}
	done := false
	defer func() {
		if !done {
			os.RemoveAll(tmp)
		}
	}()
	out := &TilesExport{TreeSize: cp.Size, Root: cp.RootString()}
	if err := os.WriteFile(filepath.Join(tmp, "checkpoint"), []byte(sc.data.Note), 0o600); err != nil {
		return nil, fmt.Errorf("export tiles: %w", err)
	}
	tw := &staticTileWriter{dir: tmp, out: out}
	whole := treeFactory.NewEmptyRange(0)
	var lh leafHasher
	want := uint64(0)
	err = src.Entries(0, cp.Size-1, func(seq uint64, raw []byte) error {
		if seq != want {
			return &IntegrityError{Seq: want, Kind: KindGap, Detail: fmt.Sprintf("expected entry %d, got %d", want, seq)}
		}
		if len(raw) > MaxBundledEntry {
			return fmt.Errorf("entry %d is %d bytes: %w (at most %d bytes; a JSONL export holds it)", seq, len(raw), ErrEntryTooLarge, MaxBundledEntry)
		}
		want++
		if err := tw.entry(raw); err != nil {
			return err
		}
		leaf := lh.sum(raw)
		return whole.Append(leaf[:], tw.node)
	})
	if err == nil && want != cp.Size {
		err = &IntegrityError{Seq: want, Kind: KindGap, Detail: "the ledger ends before the checkpoint's tree"}
	}
	if err == nil {
		err = tw.err
	}
	if err != nil {
		return nil, fmt.Errorf("export tiles: %w", err)
	}
	root, err := whole.GetRootHash(nil)
	if err != nil {
		return nil, fmt.Errorf("export tiles: %w", err)
	}
	if !bytes.Equal(root, cp.Root[:]) {
		return nil, fmt.Errorf("export tiles refused: the signed checkpoint's root %s is not the entries' tree %d %s: %w",
			cp.RootString(), cp.Size, EncodeTreeRoot([32]byte(root)), ErrIntegrity)
	}
	if err := tw.flush(); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, dir); err != nil {
		return nil, fmt.Errorf("export tiles: %w", err)
	}
	done = true
	return out, syncDir(filepath.Dir(dir))
}

// staticTileWriter writes the tiles of a tree as its nodes are computed: the
// hashes of level L*tileHeight nodes, in index order, fill tile level L;
// a full tile is written at once, the partial ones at the end (flush).
type staticTileWriter struct {
	dir     string
	out     *TilesExport
	tiles   [][]byte // tiles[L]: the hashes of the tile being filled
	next    []uint64 // next[L]: the index of the tile being filled
	bundle  []byte
	entries uint64
	err     error // sticky: the first write that failed
}

// node is the compact range's visitor: it keeps the hashes of the nodes
// that tiles hold.
func (t *staticTileWriter) node(id compact.NodeID, hash []byte) {
	if t.err != nil || id.Level%tileHeight != 0 {
		return
	}
	lvl := int(id.Level / tileHeight)
	for len(t.tiles) <= lvl {
		t.tiles, t.next = append(t.tiles, nil), append(t.next, 0)
	}
	t.tiles[lvl] = append(t.tiles[lvl], hash...)
	if len(t.tiles[lvl]) == fullTileSz {
		t.err = t.write(TilePath(lvl, t.next[lvl], tileWidth), t.tiles[lvl])
		t.tiles[lvl], t.next[lvl] = t.tiles[lvl][:0], t.next[lvl]+1
		t.out.Tiles++
	}
}

// entry adds raw to the entry bundle being filled, writing it when full.
func (t *staticTileWriter) entry(raw []byte) error {
	t.bundle = binary.BigEndian.AppendUint16(t.bundle, uint16(len(raw)))
	t.bundle = append(t.bundle, raw...)
	t.entries++
	if t.entries%tileWidth == 0 {
		if err := t.writeBundle(t.entries/tileWidth-1, tileWidth); err != nil {
			return err
		}
	}
	return nil
}

func (t *staticTileWriter) writeBundle(n uint64, w int) error {
	err := t.write("tile/entries/"+strings.TrimPrefix(TilePath(0, n, w), "tile/0/"), t.bundle)
	t.bundle = t.bundle[:0]
	t.out.Bundles++
	return err
}

// flush writes the partial tiles and bundle at the tree's right edge.
func (t *staticTileWriter) flush() error {
	for lvl, hs := range t.tiles {
		if len(hs) > 0 {
			if err := t.write(TilePath(lvl, t.next[lvl], len(hs)/hashSize), hs); err != nil {
				return err
			}
			t.out.Tiles++
		}
	}
	if w := int(t.entries % tileWidth); w > 0 {
		return t.writeBundle(t.entries/tileWidth, w)
	}
	return nil
}

func (t *staticTileWriter) write(rel string, b []byte) error { return writeTile(t.dir, rel, b) }
