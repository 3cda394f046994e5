package ledger

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/opx-dev/opx/ledger/tlog"
	bolt "go.etcd.io/bbolt"
)

// MaxBundledEntry is the largest entry a tlog-tiles entry bundle can hold:
// each entry is prefixed with its length as a big-endian uint16.
const MaxBundledEntry = 1<<16 - 1

// TilesExport is what ExportTiles wrote.
type TilesExport struct {
	// TreeSize and Root are the tree of the checkpoint written.
	TreeSize uint64
	Root     string
	// Tiles and Bundles count the files under tile/ and tile/entries/.
	Tiles, Bundles int
}

// openTilesCheckpoint opens the signed checkpoint a tiles export is cut
// at (the latest, as a ledger or a source found it), checking its note
// under the verifier key the ledger recorded.
func openTilesCheckpoint(sc signedCheckpoint, ok bool, err error) (tlog.Checkpoint, error) {
	if err != nil {
		return tlog.Checkpoint{}, fmt.Errorf("export tiles: %w", err)
	}
	if !ok {
		return tlog.Checkpoint{}, fmt.Errorf("export tiles: the ledger has no signed checkpoint: %w", ErrNotFound)
	}
	v, err := tlog.ParseVerifierKey(sc.key)
	if err != nil {
		return tlog.Checkpoint{}, fmt.Errorf("export tiles: recorded verifier key: %w", err)
	}
	cp, err := tlog.Open([]byte(sc.data.Note), v)
	if err != nil {
		return tlog.Checkpoint{}, fmt.Errorf("export tiles refused: checkpoint at %d: %w", sc.seq, err)
	}
	return cp, nil
}

// ExportTiles writes the tree of the ledger's latest signed checkpoint as
// a static C2SP tlog-tiles tree in dir, which must not exist:
//
//   - checkpoint: the signed note, exactly as recorded;
//   - tile/<L>/<N>[.p/<W>]: the hash tiles of that tree (N in the x001/
//     x234/067 path form, .p/<W> for a partial tile of W hashes);
//   - tile/entries/<N>[.p/<W>]: the entry bundles, each entry's stored
//     bytes prefixed with their length as a big-endian uint16.
//
// A generic tlog client (or transparency-dev/merkle's verifiers reading
// the files) can then check any entry's inclusion and any later tree's
// consistency without opx. Entries after the checkpoint are not in it.
// An entry over MaxBundledEntry bytes cannot be in a bundle: the export
// is refused with ErrEntryTooLarge, naming it, and nothing is written.
// The directory is written under a temporary name and renamed at the end.
func (l *Ledger) ExportTiles(dir string) (*TilesExport, error) {
	if _, err := os.Lstat(dir); err == nil {
		return nil, fmt.Errorf("export tiles: %s already exists", dir)
	}
	sc, ok, err := l.latestSignedCheckpoint()
	cp, err := openTilesCheckpoint(sc, ok, err)
	if err != nil {
		return nil, err
	}
	th, err := l.TreeHeadAt(cp.Size)
	if err != nil {
		return nil, fmt.Errorf("export tiles: %w", err)
	}
	if th.Root != cp.Root {
		return nil, fmt.Errorf("export tiles refused: the signed checkpoint's root %s is not the ledger's tree %d %s: %w",
			cp.RootString(), th.Size, EncodeTreeRoot(th.Root), ErrIntegrity)
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
	for level := 0; cp.Size>>(8*level) > 0; level++ {
		count := cp.Size >> (8 * level)
		for n := uint64(0); n*tileWidth < count; n++ {
			w := int(min(count-n*tileWidth, tileWidth))
			b, err := l.Tile(uint8(level), n, w)
			if err != nil {
				return nil, fmt.Errorf("export tiles: %w", err)
			}
			if err := writeTile(tmp, TilePath(level, n, w), b); err != nil {
				return nil, err
			}
			out.Tiles++
		}
	}
	if err := l.writeBundles(tmp, cp.Size, out); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, dir); err != nil {
		return nil, fmt.Errorf("export tiles: %w", err)
	}
	done = true
	return out, syncDir(filepath.Dir(dir))
}

// writeBundles writes the entry bundles of entries 0..size-1.
func (l *Ledger) writeBundles(dir string, size uint64, out *TilesExport) error {
	var bundle []byte
	flush := func(n uint64, w int) error {
		if err := writeTile(dir, "tile/entries/"+strings.TrimPrefix(TilePath(0, n, w), "tile/0/"), bundle); err != nil {
			return err
		}
		out.Bundles++
		bundle = bundle[:0]
		return nil
	}
	return l.view(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketEntries).Cursor()
		want := uint64(0)
		for k, v := c.Seek(seqKey(0)); k != nil && want < size; k, v = c.Next() {
			if len(k) != 8 || beUint64(k) != want {
				return fmt.Errorf("export tiles: %w", &IntegrityError{Seq: want, Kind: KindGap, Detail: fmt.Sprintf("expected entry %d, found key %x", want, k)})
			}
			if len(v) > MaxBundledEntry {
				return fmt.Errorf("export tiles: entry %d is %d bytes: %w (at most %d bytes; a JSONL export holds it)", want, len(v), ErrEntryTooLarge, MaxBundledEntry)
			}
			bundle = binary.BigEndian.AppendUint16(bundle, uint16(len(v)))
			bundle = append(bundle, v...)
			want++
			if want%tileWidth == 0 {
				if err := flush(want/tileWidth-1, tileWidth); err != nil {
					return err
				}
			}
		}
		if want < size {
			return fmt.Errorf("export tiles: %w", &IntegrityError{Seq: want, Kind: KindGap, Detail: "ledger ends before the checkpoint's tree"})
		}
		if w := int(size % tileWidth); w > 0 {
			return flush(size/tileWidth, w)
		}
		return nil
	})
}

func writeTile(dir, rel string, b []byte) error {
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return fmt.Errorf("export tiles: %w", err)
	}
	if err := os.WriteFile(p, b, 0o600); err != nil {
		return fmt.Errorf("export tiles: %w", err)
	}
	return nil
}

// TilePath is the tlog-tiles path of the tile at level and index n with w
// hashes: "tile/<L>/<N>", N written as 3-digit groups with all but the
// last prefixed by "x" (1234067 is x001/x234/067), and "/.p/<w>" appended
// below a full tile (w < 256).
func TilePath(level int, n uint64, w int) string {
	s := fmt.Sprintf("%03d", n%1000)
	for n >= 1000 {
		n /= 1000
		s = fmt.Sprintf("x%03d/%s", n%1000, s)
	}
	p := fmt.Sprintf("tile/%d/%s", level, s)
	if w < tileWidth {
		p += fmt.Sprintf(".p/%d", w)
	}
	return p
}
