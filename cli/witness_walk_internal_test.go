package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// walkLedger makes a ledger of n entries (genesis and notes) for the
// walk's tests and benchmark.
func walkLedger(tb testing.TB, n int) *ledger.Ledger {
	tb.Helper()
	ctx := context.Background()
	l, err := ledger.Create(filepath.Join(tb.TempDir(), "ledger.db"), ledger.Options{NoSync: true})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { l.Close() })
	recs := make([]ledger.Record, 0, 1000)
	for i := 1; i < n; i += len(recs) {
		recs = recs[:0]
		for j := 0; j < min(1000, n-i); j++ {
			recs = append(recs, event.MustRecord("s1", &event.Note{Author: "bench", Text: fmt.Sprintf("note %d, some text of the usual length for an entry", i+j)}))
		}
		if _, err := l.Append(ctx, ledger.Async, recs...); err != nil {
			tb.Fatal(err)
		}
	}
	if err := l.Sync(ctx); err != nil {
		tb.Fatal(err)
	}
	return l
}

// TestTreeWalk_ManySizes: one walk asked for several sizes gives, at
// each, the root a walk for that size alone gives and the ledger's own
// tree has (the empty tree's at 0; nothing for a size beyond the head).
func TestTreeWalk_ManySizes(t *testing.T) {
	l := walkLedger(t, 2500)
	src := localSince{l}
	sizes := []uint64{0, 1, 777, 1024, 2500, 9999}
	w, err := walkTree(src, sizes...)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range sizes {
		got, ok := w.rootAt(n)
		one, err := walkTree(src, n)
		if err != nil {
			t.Fatal(err)
		}
		alone, aloneOK := one.rootAt(n)
		if ok != aloneOK || got != alone {
			t.Fatalf("size %d: %x %v, alone %x %v", n, got, ok, alone, aloneOK)
		}
		if n > 2500 {
			if ok {
				t.Fatalf("a root at %d, beyond the head", n)
			}
			continue
		}
		th, err := l.TreeHeadAt(n)
		if err != nil || !ok || th.Root != got {
			t.Fatalf("size %d: walk %x %v, ledger %x %v", n, got, ok, th.Root, err)
		}
	}
}

// BenchmarkWitnessWalk: what verify --witness K1 --witness K2 --witness
// K3 reads of a 100k-entry file to find each reference's root: one walk
// for the three (now) beside one walk per witness (before), in the same
// run.
//
//	go test ./cli -run '^$' -bench BenchmarkWitnessWalk -benchtime 10x
func BenchmarkWitnessWalk(b *testing.B) {
	l := walkLedger(b, 100_000)
	src := localSince{l}
	sizes := []uint64{40_000, 70_000, 99_000}
	var one, each time.Duration
	for b.Loop() {
		t0 := time.Now()
		if _, err := walkTree(src, sizes...); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		for _, n := range sizes {
			if _, err := walkTree(src, n); err != nil {
				b.Fatal(err)
			}
		}
		one, each = one+t1.Sub(t0), each+time.Since(t1)
	}
	b.ReportMetric(float64(one.Milliseconds())/float64(b.N), "ms-one-walk/op")
	b.ReportMetric(float64(each.Milliseconds())/float64(b.N), "ms-walk-per-witness/op")
	b.ReportMetric(float64(each)/float64(one), "x-faster")
}
