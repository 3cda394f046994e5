package ledger

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"slices"
	"testing"

	"github.com/transparency-dev/merkle/compact"
)

// TestPerfectSubtree_MatchesAppend: for every chunk perfectSubtree takes
// (powers of two of leaves at multiples of them), the range it gives and
// the nodes at the tiles' heights (0 and 8) it shows, in order, are those
// of appending the leaves one by one to a compact range; every other
// chunk it declines, leaving the leaves as they were.
func TestPerfectSubtree_MatchesAppend(t *testing.T) {
	leavesOf := func(n int, seed uint64) [][32]byte {
		out := make([][32]byte, n)
		for i := range out {
			var b [16]byte
			binary.LittleEndian.PutUint64(b[:], seed)
			binary.LittleEndian.PutUint64(b[8:], uint64(i))
			out[i] = sha256.Sum256(b[:])
		}
		return out
	}
	type seen struct {
		id compact.NodeID
		h  string
	}
	tiles := func(out *[]seen) compact.VisitFn {
		return func(id compact.NodeID, h []byte) {
			if id.Level%tileHeight == 0 {
				*out = append(*out, seen{id, string(h)})
			}
		}
	}
	for _, n := range []int{1, 2, 4, 8, 128, 256, 512, 4096, 8192} {
		for _, begin := range []uint64{0, uint64(n), 3 * uint64(n), 1 << 20} {
			t.Run(fmt.Sprintf("n=%d/begin=%d", n, begin), func(t *testing.T) {
				leaves := leavesOf(n, begin)
				var want, got []seen
				ref := treeFactory.NewEmptyRange(begin)
				for i := range leaves {
					if err := ref.Append(slices.Clone(leaves[i][:]), tiles(&want)); err != nil {
						t.Fatal(err)
					}
				}
				r, ok := perfectSubtree(begin, leaves, make([]string, n), tiles(&got))
				if !ok {
					t.Fatal("declined")
				}
				if r.Begin() != ref.Begin() || r.End() != ref.End() || !slices.EqualFunc(r.Hashes(), ref.Hashes(), bytes.Equal) {
					t.Fatalf("range [%d,%d) %x, appending gives [%d,%d) %x", r.Begin(), r.End(), r.Hashes(), ref.Begin(), ref.End(), ref.Hashes())
				}
				if !slices.Equal(got, want) {
					t.Fatalf("shows %d nodes, appending %d (or in another order)", len(got), len(want))
				}
				if r2, ok := perfectSubtree(begin, leavesOf(n, begin), make([]string, n), nil); !ok || !bytes.Equal(r2.Hashes()[0], r.Hashes()[0]) {
					t.Fatal("without visit: another root")
				}
			})
		}
	}
	for _, c := range []struct {
		n     int
		begin uint64
		typ   string
	}{{0, 0, ""}, {3, 0, ""}, {4096, 2048, ""}, {4095, 0, ""}, {1 << 16, 0, ""}, {256, 0, TypeCheckpoint}, {256, 0, TypeTreeBuilt}} {
		leaves := leavesOf(c.n, 1)
		types := make([]string, c.n)
		if c.typ != "" {
			types[c.n/2] = c.typ
		}
		if _, ok := perfectSubtree(c.begin, leaves, types, nil); ok {
			t.Fatalf("%d leaves at %d (%q) taken", c.n, c.begin, c.typ)
		}
		if !slices.Equal(leaves, leavesOf(c.n, 1)) {
			t.Fatalf("%d leaves at %d (%q): leaves changed", c.n, c.begin, c.typ)
		}
	}
}
