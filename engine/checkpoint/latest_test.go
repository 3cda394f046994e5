package checkpoint_test

import (
	"context"
	"testing"

	"github.com/opx-dev/opx/engine/checkpoint"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// countingRanger is a ledger whose reads are counted, one read
// transaction a call.
type countingRanger struct {
	l       *ledger.Ledger
	calls   int
	entries uint64
	widest  uint64
}

func (r *countingRanger) RangeRaw(from, to uint64, fn func(uint64, []byte) error) error {
	r.calls++
	r.widest = max(r.widest, to-from+1)
	return r.l.RangeRaw(from, to, func(seq uint64, raw []byte) error {
		r.entries++
		return fn(seq, raw)
	})
}

// TestLatest_Find_ReadsOnlyNewEntries: on a ledger with no signed
// checkpoint, the first lookup reads it once in short transactions (at
// most 4096 entries each) and finds none; later lookups read only the
// entries appended since, and find a signed checkpoint recorded among
// them, and keep it when nothing newer is signed.
func TestLatest_Find_ReadsOnlyNewEntries(t *testing.T) {
	l, _, err := open(t, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	appendNotes := func(n int) uint64 {
		t.Helper()
		recs := make([]ledger.Record, n)
		for i := range recs {
			recs[i] = event.MustRecord("", &event.Note{Author: "t", Text: "x"})
		}
		app, err := l.Append(ctx, ledger.Sync, recs...)
		if err != nil {
			t.Fatal(err)
		}
		return app[len(app)-1].Seq
	}
	head := appendNotes(9000)
	r := &countingRanger{l: l}
	var lt checkpoint.Latest
	find := func(upto uint64) (uint64, bool) {
		t.Helper()
		r.calls, r.entries, r.widest = 0, 0, 0
		seq, _, ok, err := lt.Find(r, upto)
		if err != nil {
			t.Fatal(err)
		}
		return seq, ok
	}
	if _, ok := find(head); ok || r.entries != head+1 || r.widest > 4096 || r.calls < 3 {
		t.Fatalf("first lookup: found %v, read %d entries of %d in %d transactions of at most %d", ok, r.entries, head+1, r.calls, r.widest)
	}
	if _, ok := find(head); ok || r.entries != 0 {
		t.Fatalf("same head again: found %v, read %d entries", ok, r.entries)
	}
	head = appendNotes(3)
	if _, ok := find(head); ok || r.entries != 3 {
		t.Fatalf("3 entries later: found %v, read %d entries, want 3", ok, r.entries)
	}
	cp, err := l.Checkpoint(ctx, ledger.Sync)
	if err != nil {
		t.Fatal(err)
	}
	head = appendNotes(2)
	if seq, ok := find(head); !ok || seq != cp.Seq || r.entries != 3 {
		t.Fatalf("after a signed checkpoint: found %d %v, read %d entries, want %d true 3", seq, ok, r.entries, cp.Seq)
	}
	head = appendNotes(5)
	if seq, ok := find(head); !ok || seq != cp.Seq || r.entries != 5 {
		t.Fatalf("5 entries later: found %d %v, read %d entries, want %d true 5", seq, ok, r.entries, cp.Seq)
	}
	if seq, ok := find(cp.Seq - 1); ok || r.entries != cp.Seq {
		t.Fatalf("below the checkpoint: found %d %v, read %d entries", seq, ok, r.entries)
	}
}
