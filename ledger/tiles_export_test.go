package ledger_test

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opx-dev/opx/ledger"
	"github.com/transparency-dev/formats/log"
	"github.com/transparency-dev/merkle/compact"
	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
	sumnote "golang.org/x/mod/sumdb/note"
)

func TestTilePath(t *testing.T) {
	for _, tt := range []struct {
		level int
		n     uint64
		w     int
		want  string
	}{
		{0, 0, 256, "tile/0/000"},
		{0, 1234067, 256, "tile/0/x001/x234/067"},
		{1, 1000, 256, "tile/1/x001/000"},
		{2, 5, 17, "tile/2/005.p/17"},
		{0, 999, 1, "tile/0/999.p/1"},
	} {
		if got := ledger.TilePath(tt.level, tt.n, tt.w); got != tt.want {
			t.Errorf("TilePath(%d, %d, %d) = %s, want %s", tt.level, tt.n, tt.w, got, tt.want)
		}
	}
}

// staticTree reads a tlog-tiles tree from a directory, knowing only the
// tlog-tiles layout: no opx code.
type staticTree struct {
	dir  string
	size uint64
}

func (s staticTree) read(t *testing.T, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(s.dir, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// tilePath is the tlog-tiles path, written here again from the spec.
func tilePath(prefix string, n uint64, w uint64) string {
	parts := []string{}
	for {
		parts = append([]string{strings.Repeat("0", 3-len(itoa(n%1000))) + itoa(n%1000)}, parts...)
		n /= 1000
		if n == 0 {
			break
		}
	}
	for i := 0; i < len(parts)-1; i++ {
		parts[i] = "x" + parts[i]
	}
	p := prefix + strings.Join(parts, "/")
	if w < 256 {
		p += ".p/" + itoa(w)
	}
	return p
}

// tile returns the hashes of tile (level, n) of the tree.
func (s staticTree) tile(t *testing.T, level uint, n uint64) []byte {
	count := s.size >> (8 * level)
	w := min(count-n*256, 256)
	b := s.read(t, tilePath("tile/"+itoa(uint64(level))+"/", n, w))
	if uint64(len(b)) != w*32 {
		t.Fatalf("tile %d/%d: %d bytes, want %d", level, n, len(b), w*32)
	}
	return b
}

// node returns the hash of tree node (level, index), from the tile that
// holds its subtree's hashes at the tile's level.
func (s staticTree) node(t *testing.T, id compact.NodeID) []byte {
	tl, sub := id.Level/8, id.Level%8
	first := id.Index << sub
	b := s.tile(t, tl, first/256)
	var hs [][]byte
	for i := uint64(0); i < 1<<sub; i++ {
		j := (first%256 + i) * 32
		hs = append(hs, b[j:j+32])
	}
	for len(hs) > 1 {
		var up [][]byte
		for i := 0; i < len(hs); i += 2 {
			up = append(up, rfc6962.DefaultHasher.HashChildren(hs[i], hs[i+1]))
		}
		hs = up
	}
	return hs[0]
}

// entry returns entry i from its entry bundle.
func (s staticTree) entry(t *testing.T, i uint64) []byte {
	b := s.read(t, tilePath("tile/entries/", i/256, min(s.size-i/256*256, 256)))
	for k := uint64(0); ; k++ {
		n := binary.BigEndian.Uint16(b)
		if k == i%256 {
			return b[2 : 2+n]
		}
		b = b[2+n:]
	}
}

// TestExportTiles_VerifiesWithMerkle exports a 600-entry signing ledger as
// a static tlog-tiles tree and checks it reading only files from the
// directory: the checkpoint with x/mod's note verifier and formats/log's
// parser, every entry's inclusion with transparency-dev/merkle's proof
// builder and verifier over hashes taken from the tiles, and the entry
// bundles against the ledger's stored bytes.
func TestExportTiles_VerifiesWithMerkle(t *testing.T) {
	sl := newSignedLedger(t, 600)
	dir := filepath.Join(t.TempDir(), "tiles")
	te, err := sl.l.ExportTiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	v, err := sumnote.NewVerifier(sl.vkey)
	if err != nil {
		t.Fatal(err)
	}
	st := staticTree{dir: dir}
	cp, _, _, err := log.ParseCheckpoint(st.read(t, "checkpoint"), v.Name(), v)
	if err != nil {
		t.Fatal(err)
	}
	st.size = cp.Size
	if cp.Size != te.TreeSize || cp.Size < 600 {
		t.Fatalf("checkpoint of %d entries, export says %d", cp.Size, te.TreeSize)
	}
	for i := uint64(0); i < cp.Size; i++ {
		e := st.entry(t, i)
		want, err := sl.l.Get(i)
		if err != nil || string(want.Raw) != string(e) {
			t.Fatalf("entry %d in its bundle differs from the ledger's: %v", i, err)
		}
		nodes, err := proof.Inclusion(i, cp.Size)
		if err != nil {
			t.Fatal(err)
		}
		var hs [][]byte
		for _, id := range nodes.IDs {
			hs = append(hs, st.node(t, id))
		}
		if hs, err = nodes.Rehash(hs, rfc6962.DefaultHasher.HashChildren); err != nil {
			t.Fatal(err)
		}
		if err := proof.VerifyInclusion(rfc6962.DefaultHasher, i, cp.Size, rfc6962.DefaultHasher.HashLeaf(e), hs, cp.Hash); err != nil {
			t.Fatalf("entry %d: %v", i, err)
		}
	}
	if _, err := sl.l.ExportTiles(dir); err == nil {
		t.Error("ExportTiles overwrote an existing directory")
	}
}

// TestExportTiles_EntryTooLarge checks that a tree holding an entry over
// 65535 bytes is refused, naming it, and nothing is written.
func TestExportTiles_EntryTooLarge(t *testing.T) {
	sl := newSignedLedger(t, 3)
	big := ledger.Record{Session: "s", Type: "ledger.note", Data: map[string]any{"author": "t", "text": strings.Repeat("x", 70000)}}
	a, err := sl.l.Append(context.Background(), ledger.Sync, big)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sl.l.Checkpoint(context.Background(), ledger.Sync); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "tiles")
	_, err = sl.l.ExportTiles(dir)
	if !errors.Is(err, ledger.ErrEntryTooLarge) || !strings.Contains(err.Error(), "entry "+itoa(a[0].Seq)) {
		t.Fatalf("err %v, want ErrEntryTooLarge naming entry %d", err, a[0].Seq)
	}
	if ents, _ := os.ReadDir(filepath.Dir(dir)); len(ents) != 0 {
		t.Errorf("left %v behind", ents)
	}
}

// TestExportTilesSource_SameFilesAsExportTiles exports the tree through a
// Source (as through a running engine) and offline, for trees with and
// without partial tiles at each level, and checks the two directories
// hold the same files byte for byte.
func TestExportTilesSource_SameFilesAsExportTiles(t *testing.T) {
	for _, n := range []int{0, 253, 600} {
		t.Run(itoa(uint64(n)), func(t *testing.T) {
			sl := newSignedLedger(t, n)
			base := t.TempDir()
			offline, err := sl.l.ExportTiles(filepath.Join(base, "offline"))
			if err != nil {
				t.Fatal(err)
			}
			h, err := sl.l.Head()
			if err != nil {
				t.Fatal(err)
			}
			live, err := ledger.ExportTilesSource(sl.l.LocalSource(h), filepath.Join(base, "live"))
			if err != nil {
				t.Fatal(err)
			}
			if *live != *offline {
				t.Errorf("through a source: %+v, offline: %+v", live, offline)
			}
			want, got := dirFiles(t, filepath.Join(base, "offline")), dirFiles(t, filepath.Join(base, "live"))
			if len(want) != len(got) {
				t.Errorf("%d files through a source, %d offline", len(got), len(want))
			}
			for p, b := range want {
				if got[p] != b {
					t.Errorf("%s differs from the offline export's", p)
				}
			}
		})
	}
}

// TestExportTilesSource_Refused feeds the export entries that are not the
// signed tree's (one byte changed), and one too large for a bundle: each
// is refused and nothing is left behind.
func TestExportTilesSource_Refused(t *testing.T) {
	sl := newSignedLedger(t, 40)
	h, err := sl.l.Head()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		edit func(seq uint64, raw []byte) []byte
		want error
	}{
		{"flipped byte", func(seq uint64, raw []byte) []byte {
			if seq == 5 {
				raw = append([]byte(nil), raw...)
				raw[len(raw)/2] ^= 1
			}
			return raw
		}, ledger.ErrIntegrity},
		{"entry too large", func(seq uint64, raw []byte) []byte {
			if seq == 7 {
				return []byte(strings.Repeat("x", ledger.MaxBundledEntry+1))
			}
			return raw
		}, ledger.ErrEntryTooLarge},
	} {
		t.Run(tt.name, func(t *testing.T) {
			parent := t.TempDir()
			_, err := ledger.ExportTilesSource(editedSource{Source: sl.l.LocalSource(h), edit: tt.edit}, filepath.Join(parent, "tiles"))
			if !errors.Is(err, tt.want) {
				t.Fatalf("err %v, want %v", err, tt.want)
			}
			if ents, _ := os.ReadDir(parent); len(ents) != 0 {
				t.Errorf("left %v behind", ents)
			}
		})
	}
}

// editedSource hands over a Source's entries through edit.
type editedSource struct {
	ledger.Source
	edit func(seq uint64, raw []byte) []byte
}

func (s editedSource) Entries(from, to uint64, fn func(uint64, []byte) error) error {
	return s.Source.Entries(from, to, func(seq uint64, raw []byte) error { return fn(seq, s.edit(seq, raw)) })
}

// dirFiles reads every file under dir, by slash path.
func dirFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
