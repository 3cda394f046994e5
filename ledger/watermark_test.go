package ledger_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/ledgertest"
)

// TestLedger_Watermark: an Async entry is queued but not durable until a
// commit; the commit moves Durable to it and closes Advanced. The group
// commit is held back (an hour) so only the explicit Sync commits.
func TestLedger_Watermark(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	l, err := ledger.Create(path, ledger.Options{FlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := l.Close(); err != nil {
			t.Error(err)
		}
		ledgertest.MustVerify(t, path)
	})
	w0, err := l.Watermark()
	if err != nil || w0.Queued != 0 || w0.Durable != 0 {
		t.Fatalf("fresh ledger: watermark %+v, %v; want 0/0", w0, err)
	}
	a, err := l.Append(context.Background(), ledger.Async, note(1), note(2))
	if err != nil {
		t.Fatal(err)
	}
	w1, _ := l.Watermark()
	if w1.Queued != a[1].Seq || w1.Durable != 0 {
		t.Fatalf("after an Async append of %d-%d: watermark %+v; want queued %d, durable 0", a[0].Seq, a[1].Seq, w1, a[1].Seq)
	}
	select {
	case <-w1.Advanced:
		t.Fatal("Advanced closed before anything was committed")
	default:
	}
	if err := l.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	<-w1.Advanced // closed by the commit
	w2, _ := l.Watermark()
	if w2.Durable != a[1].Seq || w2.Queued != a[1].Seq {
		t.Fatalf("after Sync: watermark %+v; want %d/%d", w2, a[1].Seq, a[1].Seq)
	}
	if h, _ := l.Head(); h.Seq != w2.Durable {
		t.Errorf("head %d, durable %d", h.Seq, w2.Durable)
	}
	// A reopened ledger starts durable at its head.
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if l, err = ledger.Open(path, ledger.Options{}); err != nil {
		t.Fatal(err)
	}
	if w, _ := l.Watermark(); w.Durable != a[1].Seq || w.Queued != a[1].Seq {
		t.Errorf("reopened: watermark %+v; want %d/%d", w, a[1].Seq, a[1].Seq)
	}
}
