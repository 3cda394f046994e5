package ledger

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
)

// TestWriter_StickyFailure makes a commit fail (the bbolt file is closed
// underneath the writer) and checks that the ledger refuses every later
// append, and that reopening shows exactly what was acknowledged.
func TestWriter_StickyFailure(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	l, err := Create(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rec := Record{Type: "ledger.note", Data: map[string]any{"author": "t", "text": "x"}}
	acked, err := l.Append(ctx, Sync, rec, rec)
	if err != nil {
		t.Fatal(err)
	}
	// The disk goes away: the next commit fails.
	if err := l.db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(ctx, Sync, rec); err == nil {
		t.Fatal("Sync append on a failed store returned no error")
	}
	for _, d := range []Durability{Sync, Async} {
		if _, err := l.Append(ctx, d, rec); !errors.Is(err, ErrBroken) {
			t.Errorf("%v append after a failed commit = %v, want ErrBroken", d, err)
		}
	}
	if err := l.Sync(ctx); !errors.Is(err, ErrBroken) {
		t.Errorf("Sync after a failed commit = %v, want ErrBroken", err)
	}
	if err := l.Close(); !errors.Is(err, ErrBroken) {
		t.Errorf("Close = %v, want it to report ErrBroken", err)
	}

	l2, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer l2.Close()
	h, err := l2.Head()
	if err != nil || h.Seq != acked[1].Seq || h.Hash != acked[1].Hash {
		t.Errorf("head after reopen %+v, want the last acknowledged entry %+v", h, acked[1])
	}
	rep, err := l2.Verify(VerifyOptions{Strict: true})
	if err != nil || !rep.OK {
		t.Errorf("verify after reopen: %v %v", err, rep.Err())
	}
	// A reopened ledger appends again, continuing the chain.
	if a, err := l2.Append(ctx, Sync, rec); err != nil || a[0].Seq != h.Seq+1 {
		t.Errorf("append after reopen: %v %v", a, err)
	}
}
