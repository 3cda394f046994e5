package ledger_test

import (
	"encoding/binary"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/opx-dev/opx/ledger"
)

// junkTileSource is a hostile TileSource: it names a head, stores no
// entries, and hands over tiles tiles of 8 KiB (a full tile's size)
// under level-0 keys, calling sample after every 256 of them.
// A copy that holds the tiles until one commit holds them all.
type junkTileSource struct {
	head   uint64
	tiles  int
	sample func()
}

func (s junkTileSource) Head() (ledger.Head, error) { return ledger.Head{Seq: s.head}, nil }

func (s junkTileSource) Entries(from, to uint64, fn func(uint64, []byte) error) error { return nil }

func (s junkTileSource) Blob(ledger.Hash) (io.ReadCloser, error) { return nil, errors.New("no blobs") }

func (s junkTileSource) TreeLayout() (string, bool, error) { return ledger.TreeLayout, true, nil }

func (s junkTileSource) Tiles(size uint64, fn func(key, tile []byte) error) error {
	for i := range s.tiles {
		tile := make([]byte, 8192) // fresh, as a message off the wire is
		key := make([]byte, 9)     // level 0, index i
		binary.BigEndian.PutUint64(key[1:], uint64(i))
		tile[0] = byte(i)
		if err := fn(key, tile); err != nil {
			return err
		}
		if s.sample != nil && i%256 == 0 {
			s.sample()
		}
	}
	return nil
}

// TestVerifySource_TilesBeyondTreeBytes: a source naming a head of 256,000
// entries (a tree of about 8 MiB of tiles) that sends 2,000 full tiles
// (16 MiB) is refused once it passes the bytes that tree holds, though it
// stays under the tile count such a tree allows.
func TestVerifySource_TilesBeyondTreeBytes(t *testing.T) {
	_, err := ledger.VerifySource(junkTileSource{head: 256000 - 1, tiles: 2000}, ledger.VerifyOptions{})
	if err == nil || !strings.Contains(err.Error(), "bytes of tree tiles") {
		t.Fatalf("VerifySource = %v, want a refusal for too many tile bytes", err)
	}
}

// TestVerifySource_TilesBoundedMemory: a source naming a head of 2^40
// entries (so neither cap refuses) and sending 160 MiB of tiles does not
// make verify hold them in memory: the copy commits in batches. The heap
// is sampled as the tiles go by; a copy in one transaction held all of
// them (over 150 MiB in use), a batched one a few MiB.
func TestVerifySource_TilesBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 160 MiB of tiles to a temporary file")
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base, peak := ms.HeapInuse, ms.HeapInuse
	sample := func() {
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapInuse)
	}
	r, err := ledger.VerifySource(junkTileSource{head: 1<<40 - 1, tiles: 20000, sample: sample}, ledger.VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.OK {
		t.Fatal("a source with no entries verified")
	}
	if grew := peak - min(peak, base); grew > 64<<20 {
		t.Fatalf("heap in use grew by %d MiB while copying 160 MiB of tiles, want under 64 MiB", grew>>20)
	}
}
