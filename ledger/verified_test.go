package ledger_test

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/ledgertest"
)

// TestAppendVerified: entries checked once by CheckVerified make, through
// AppendVerified, the mirror AppendVerbatim makes (it verifies, byte for
// byte the source's); the mirror still refuses what does not carry its
// next seq, what does not chain onto its head, and a Verified no check
// made, queuing nothing of the call.
func TestAppendVerified(t *testing.T) {
	dir := t.TempDir()
	src := ledgertest.New(t, filepath.Join(dir, "src.db"), 30)
	raws, frames := sourceOf(t, src.Path)
	ctx := context.Background()
	mpath := filepath.Join(dir, "m", "ledger.db")
	m, err := ledger.CreateMirror(mpath, raws[0], ledger.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	for h, f := range frames {
		if err := m.PutBlobFrame(ctx, ledger.Async, h, f); err != nil {
			t.Fatal(err)
		}
	}
	vs := make([]ledger.Verified, len(raws))
	prev := ledger.Sum(raws[0])
	for i := 1; i < len(raws); i++ {
		if vs[i], err = ledger.CheckVerified(uint64(i), prev, raws[i]); err != nil {
			t.Fatalf("check %d: %v", i, err)
		}
		if vs[i].Hash() != ledger.Sum(raws[i]) || vs[i].Seq() != uint64(i) {
			t.Fatalf("entry %d: seq %d hash %s", i, vs[i].Seq(), vs[i].Hash())
		}
		prev = vs[i].Hash()
	}
	if _, err := ledger.CheckVerified(2, ledger.Sum(raws[0]), raws[2]); !isKind(err, ledger.KindHashMismatch) {
		t.Fatalf("check of entry 2 after entry 0: %v", err)
	}
	if _, err := m.AppendVerified(ctx, ledger.Sync, vs[1:5]...); err != nil {
		t.Fatal(err)
	}
	// Refusals: nothing of the call is queued.
	if _, err := m.AppendVerified(ctx, ledger.Sync, vs[6]); !isKind(err, ledger.KindGap) {
		t.Fatalf("entry 6 after 4: %v", err)
	}
	if _, err := m.AppendVerified(ctx, ledger.Sync, vs[5], vs[5]); !isKind(err, ledger.KindSeqMismatch) {
		t.Fatalf("entry 5 twice: %v", err)
	}
	other, err := ledger.CheckVerified(5, ledger.Sum(raws[3]), raws[5])
	if err == nil {
		t.Fatalf("entry 5 checked against entry 3's hash: %v", other)
	}
	if _, err := m.AppendVerified(ctx, ledger.Sync, ledger.Verified{}); !isKind(err, ledger.KindUnreadable) {
		t.Fatalf("a zero Verified: %v", err)
	}
	if next, _ := m.MirrorNext(); next != 5 {
		t.Fatalf("after refusals the mirror takes %d next, want 5", next)
	}
	if _, err := m.AppendVerified(ctx, ledger.Async, vs[5:]...); err != nil {
		t.Fatal(err)
	}
	if err := m.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	ledgertest.MustVerify(t, mpath)
	got, _ := sourceOf(t, mpath)
	if len(got) != len(raws) {
		t.Fatalf("%d entries, want %d", len(got), len(raws))
	}
	for i := range raws {
		if !bytes.Equal(got[i], raws[i]) {
			t.Fatalf("entry %d differs", i)
		}
	}
}
