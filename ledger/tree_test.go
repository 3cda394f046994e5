package ledger_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
	"github.com/transparency-dev/merkle/testonly"
	bolt "go.etcd.io/bbolt"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/ledgertest"
)

// refTree is the reference tree of the ledger's entries, read back.
func refTree(t *testing.T, l *ledger.Ledger) *testonly.Tree {
	t.Helper()
	ref := testonly.New(rfc6962.DefaultHasher)
	h, err := l.Head()
	if err != nil {
		t.Fatal(err)
	}
	for seq := uint64(0); seq <= h.Seq; seq++ {
		e, err := l.Get(seq)
		if err != nil {
			t.Fatal(err)
		}
		ref.AppendData(e.Raw)
	}
	return ref
}

func noteRec(i int) ledger.Record {
	return ledger.Record{Type: ledger.TypeNote, Data: map[string]any{"author": "t", "text": fmt.Sprintf("note %d %s", i, bytes.Repeat([]byte("x"), i%50))}}
}

// checkTree compares the ledger's tree at every size with the reference,
// and verifies a few proofs at each.
func checkTree(t *testing.T, l *ledger.Ledger) {
	t.Helper()
	ref := refTree(t, l)
	th, err := l.TreeHead()
	if err != nil || th.Size != ref.Size() || !bytes.Equal(th.Root[:], ref.Hash()) {
		t.Fatalf("TreeHead = %d %x, %v; want %d %x", th.Size, th.Root, err, ref.Size(), ref.Hash())
	}
	for s := uint64(1); s <= ref.Size(); s++ {
		at, err := l.TreeHeadAt(s)
		if err != nil || at.Size != s || !bytes.Equal(at.Root[:], ref.HashAt(s)) {
			t.Fatalf("TreeHeadAt(%d) = %x, %v; want %x", s, at.Root, err, ref.HashAt(s))
		}
		for _, i := range []uint64{0, s / 2, s - 1} {
			p, err := l.InclusionProof(i, s)
			if err != nil {
				t.Fatal(err)
			}
			if err := proof.VerifyInclusion(rfc6962.DefaultHasher, i, s, ref.LeafHash(i), p, at.Root[:]); err != nil {
				t.Fatalf("inclusion %d in %d: %v", i, s, err)
			}
		}
		for _, s1 := range []uint64{1, s / 3, s - 1} {
			if s1 == 0 {
				continue
			}
			p, err := l.ConsistencyProof(s1, s)
			if err != nil {
				t.Fatal(err)
			}
			if err := proof.VerifyConsistency(rfc6962.DefaultHasher, s1, s, p, ref.HashAt(s1), at.Root[:]); err != nil {
				t.Fatalf("consistency %d to %d: %v", s1, s, err)
			}
		}
	}
}

// TestTree_AppendReopen grows a ledger past tile boundaries at levels 0
// and 1 with Sync and Async appends of uneven batches, reopens it (the
// writer's range comes back from the edge tiles) and appends more; the
// tree matches the reference at every size, and the ledger verifies.
func TestTree_AppendReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ledger.db")
	l, err := ledger.Create(path, ledger.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	i := 0
	for i < 300 {
		n := 1 + i%13
		recs := make([]ledger.Record, n)
		for j := range recs {
			recs[j] = noteRec(i + j)
		}
		d := ledger.Async
		if i%3 == 0 {
			d = ledger.Sync
		}
		if _, err := l.Append(ctx, d, recs...); err != nil {
			t.Fatal(err)
		}
		i += n
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if l, err = ledger.Open(path, ledger.Options{NoSync: true}); err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for ; i < 620; i++ {
		if _, err := l.Append(ctx, ledger.Async, noteRec(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	checkTree(t, l)
	for _, tc := range []struct {
		lvl   uint8
		idx   uint64
		width int
		err   error
	}{{0, 0, 256, nil}, {0, 0, 3, nil}, {0, 2, 109, nil}, {0, 2, 110, ledger.ErrNotFound}, {1, 0, 2, nil}, {1, 0, 3, ledger.ErrNotFound}, {0, 3, 1, ledger.ErrNotFound}} {
		tile, err := l.Tile(tc.lvl, tc.idx, tc.width)
		if !errors.Is(err, tc.err) || (err == nil && len(tile) != 32*tc.width) {
			t.Errorf("Tile(%d, %d, %d) = %d bytes, %v; want %v", tc.lvl, tc.idx, tc.width, len(tile), err, tc.err)
		}
	}
	// The level-0 tile at width 3 is the first three leaf hashes.
	tile, _ := l.Tile(0, 0, 3)
	e, _ := l.Get(2)
	if lh := ledger.LeafHash(e.Raw); !bytes.Equal(tile[64:], lh[:]) {
		t.Errorf("tile 0/0 hash 2 = %x, want %x", tile[64:], lh)
	}
	if _, err := l.TreeHeadAt(10_000); !errors.Is(err, ledger.ErrTreeSize) {
		t.Errorf("TreeHeadAt beyond the head: %v", err)
	}
	if _, err := l.InclusionProof(5, 5); !errors.Is(err, ledger.ErrTreeSize) {
		t.Errorf("InclusionProof(5, 5): %v", err)
	}
	hs, err := l.RangeHashesAt(600)
	if err != nil || len(hs) != 4 { // 600 = 512 + 64 + 16 + 8: four subtrees
		t.Errorf("RangeHashesAt(600) = %d hashes, %v", len(hs), err)
	}
	l.Close()
	ledgertest.MustVerify(t, path)
}

// TestTree_Checkpoint records the tree in a checkpoint of a ledger opened
// without projections, as of the entry before it, with queued Async
// entries folded in, and with the note SignCheckpoint returns.
func TestTree_Checkpoint(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ledger.db")
	var signed []ledger.TreeHead
	l, err := ledger.Create(path, ledger.Options{NoSync: true, FlushInterval: 1 << 40,
		SignCheckpoint: func(th ledger.TreeHead) (string, error) {
			signed = append(signed, th)
			return fmt.Sprintf("note of %d\n", th.Size), nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for i := 0; i < 40; i++ {
		if _, err := l.Append(ctx, ledger.Async, noteRec(i)); err != nil {
			t.Fatal(err)
		}
	}
	// Nothing is committed yet (the flush interval is long): the tree
	// comes from the queue.
	a, err := l.Checkpoint(ctx, ledger.Sync)
	if err != nil {
		t.Fatal(err)
	}
	if a.Seq != 41 {
		t.Fatalf("checkpoint at %d", a.Seq)
	}
	e, err := l.Get(a.Seq)
	if err != nil {
		t.Fatal(err)
	}
	var c ledger.CheckpointPayload
	if err := json.Unmarshal(e.Data, &c); err != nil {
		t.Fatal(err)
	}
	want, err := l.TreeHeadAt(a.Seq)
	if err != nil {
		t.Fatal(err)
	}
	if c.TreeSize != a.Seq || c.TreeRoot != ledger.EncodeTreeRoot(want.Root) || c.Note != "note of 41\n" || len(c.Projections) != 0 {
		t.Errorf("checkpoint = %+v, want tree %d %s", c, want.Size, ledger.EncodeTreeRoot(want.Root))
	}
	if len(signed) != 1 || signed[0] != want {
		t.Errorf("signed %v, want %v", signed, want)
	}
	th, _ := l.TreeHead()
	if th.Size != 42 {
		t.Errorf("tree head size %d, want 42", th.Size)
	}
	checkTree(t, l)
}

// TestTree_OlderLedger opens a ledger written without the tree: read-only
// it has none (ErrNoTree) and still verifies; the first writable open
// builds it in batches and records ledger.tree_built.
func TestTree_OlderLedger(t *testing.T) {
	defer ledger.SetTreeBuildBatch(100)()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ledger.db")
	l, err := ledger.Create(path, ledger.WithoutTree(ledger.Options{NoSync: true}))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 299; i++ {
		if _, err := l.Append(ctx, ledger.Async, noteRec(i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := l.Checkpoint(ctx, ledger.Sync); !errors.Is(err, ledger.ErrNoProjection) {
		t.Errorf("checkpoint without projections or tree: %v", err)
	}
	l.Close()
	ledgertest.MustVerify(t, path)
	ro, err := ledger.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ro.TreeHead(); !errors.Is(err, ledger.ErrNoTree) {
		t.Errorf("TreeHead of an older ledger: %v", err)
	}
	ro.Close()

	if l, err = ledger.Open(path, ledger.Options{NoSync: true}); err != nil {
		t.Fatal(err)
	}
	h, _ := l.Head()
	if h.Seq != 300 {
		t.Fatalf("head %d after the build, want 300 (tree_built)", h.Seq)
	}
	e, _ := l.Get(300)
	var tb ledger.TreeBuiltPayload
	if e.Type != ledger.TypeTreeBuilt || json.Unmarshal(e.Data, &tb) != nil {
		t.Fatalf("entry 300 = %s %s", e.Type, e.Data)
	}
	at, _ := l.TreeHeadAt(300)
	if tb.TreeSize != 300 || tb.TreeRoot != ledger.EncodeTreeRoot(at.Root) {
		t.Errorf("tree_built = %+v, want 300 %s", tb, ledger.EncodeTreeRoot(at.Root))
	}
	checkTree(t, l)
	l.Close()
	// Opened again, it is not built again.
	if l, err = ledger.Open(path, ledger.Options{NoSync: true}); err != nil {
		t.Fatal(err)
	}
	if h, _ := l.Head(); h.Seq != 300 {
		t.Errorf("head %d after a second open", h.Seq)
	}
	l.Close()
	ledgertest.MustVerify(t, path)
}

// TestTree_OpenDamaged refuses a writable open of a ledger whose tree is
// gone or does not fit its entries: it is damage, not an older ledger.
func TestTree_OpenDamaged(t *testing.T) {
	src := ledgertest.New(t, filepath.Join(t.TempDir(), "ledger.db"), 300)
	for name, edit := range map[string]func(tx *bolt.Tx) error{
		"bucket deleted": func(tx *bolt.Tx) error { return tx.DeleteBucket([]byte("tree")) },
		// Level 1's edge tile 1/0 (level 0's is not stored).
		"edge tile deleted": func(tx *bolt.Tx) error {
			return tx.Bucket([]byte("tree")).Delete([]byte{1, 0, 0, 0, 0, 0, 0, 0, 0})
		},
		"level-0 edge tile stored": func(tx *bolt.Tx) error {
			return tx.Bucket([]byte("tree")).Put([]byte{0, 0, 0, 0, 0, 0, 0, 0, 1}, make([]byte, 32))
		},
		"edge tile short": func(tx *bolt.Tx) error {
			k := []byte{1, 0, 0, 0, 0, 0, 0, 0, 0}
			v := tx.Bucket([]byte("tree")).Get(k)
			return tx.Bucket([]byte("tree")).Put(k, append([]byte(nil), v[:len(v)-32]...))
		},
		"tile beyond": func(tx *bolt.Tx) error {
			return tx.Bucket([]byte("tree")).Put([]byte{0, 0, 0, 0, 0, 0, 0, 0, 7}, make([]byte, 32))
		},
	} {
		t.Run(name, func(t *testing.T) {
			path := ledgertest.Copy(t, src.Path, filepath.Join(t.TempDir(), "ledger.db"))
			ledgertest.Edit(t, path, edit)
			if l, err := ledger.Open(path, ledger.Options{NoSync: true}); !errors.Is(err, ledger.ErrTreeDamaged) {
				t.Errorf("Open = %v, want ErrTreeDamaged", err)
				if err == nil {
					l.Close()
				}
			}
		})
	}
}

// TestTree_CheckpointRacingAppends: with Async appends racing from
// several goroutines, each checkpoint records the tree of exactly the
// entries before it (verify checks every one), and the Sync ones as well.
func TestTree_CheckpointRacingAppends(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ledger.db")
	l, err := ledger.Create(path, ledger.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 4)
	for g := 0; g < 4; g++ {
		go func() {
			for i := 0; i < 500; i++ {
				if _, err := l.Append(ctx, ledger.Async, noteRec(g*1000+i)); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for i := 0; i < 20; i++ {
		d := ledger.Async
		if i%2 == 0 {
			d = ledger.Sync
		}
		if _, err := l.Checkpoint(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	for g := 0; g < 4; g++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	ro, err := ledger.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	checked := 0
	rep, err := ro.Verify(ledger.VerifyOptions{Strict: true, CheckCheckpoint: func(uint64, ledger.TreeHead, string) error {
		checked++
		return nil
	}})
	if err != nil || !rep.OK || rep.TreeUnchecked != 0 || checked != 20 {
		t.Fatalf("verify: %v, ok %v, unchecked %d, checked %d: %v", err, rep.OK, rep.TreeUnchecked, checked, rep.Failures)
	}
}
