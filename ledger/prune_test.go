package ledger_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/opx-dev/opx/ledger"
)

func TestLedger_PruneBlobs(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ledger.db")
	l, err := ledger.Create(path, ledger.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	old, kept := []byte("old file content\n"), []byte("content still needed\n")
	hOld, hKept := ledger.Sum(old), ledger.Sum(kept)
	rec := func(typ string, data map[string]any, blobs ...[]byte) ledger.Record {
		return ledger.Record{Session: "s", Type: typ, Data: data, Blobs: blobs}
	}
	if _, err := l.Append(ctx, ledger.Sync,
		rec("chronicle.snapshot", map[string]any{"blob": hOld.String()}, old),
		rec("chronicle.snapshot", map[string]any{"blob": hKept.String()}, kept)); err != nil {
		t.Fatal(err)
	}

	// Refusals change nothing.
	before, _ := l.Head()
	for name, r := range map[string]ledger.Record{
		"wrong type": rec("ledger.note", map[string]any{"blobs": []string{hOld.String()}}),
		"no blobs":   rec(ledger.TypePruned, map[string]any{"blobs": []string{}}),
		"bad hash":   rec(ledger.TypePruned, map[string]any{"blobs": []string{"xyz"}}),
	} {
		if _, err := l.PruneBlobs(ctx, r); !errors.Is(err, ledger.ErrInvalidRecord) {
			t.Errorf("%s: PruneBlobs = %v, want ErrInvalidRecord", name, err)
		}
	}
	if h, _ := l.Head(); h != before {
		t.Errorf("refused prunes appended: head %d, was %d", h.Seq, before.Seq)
	}

	a, err := l.PruneBlobs(ctx, rec(ledger.TypePruned, map[string]any{"blobs": []string{hOld.String()}, "reason": "retention"}))
	if err != nil {
		t.Fatal(err)
	}
	if a.Seq != before.Seq+1 {
		t.Errorf("prune entry at %d, want %d", a.Seq, before.Seq+1)
	}
	if _, err := l.GetBlob(hOld); !errors.Is(err, ledger.ErrNotFound) {
		t.Errorf("pruned blob: GetBlob = %v, want ErrNotFound", err)
	}
	if b, err := l.GetBlob(hKept); err != nil || string(b) != string(kept) {
		t.Errorf("unpruned blob: %q, %v", b, err)
	}
	if rep, err := l.Verify(ledger.VerifyOptions{Strict: true}); err != nil || !rep.OK {
		t.Fatalf("verify after prune: %v %v", err, rep.Err())
	}

	// The same content recorded again is stored again.
	if _, err := l.Append(ctx, ledger.Sync, rec("chronicle.snapshot", map[string]any{"blob": hOld.String()}, old)); err != nil {
		t.Fatal(err)
	}
	if _, err := l.GetBlob(hOld); err != nil {
		t.Errorf("re-recorded blob: %v", err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	ro, err := ledger.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if _, err := ro.PruneBlobs(ctx, rec(ledger.TypePruned, map[string]any{"blobs": []string{hKept.String()}})); !errors.Is(err, ledger.ErrReadOnly) {
		t.Errorf("read-only PruneBlobs = %v, want ErrReadOnly", err)
	}
	if rep, err := ro.Verify(ledger.VerifyOptions{Strict: true}); err != nil || !rep.OK {
		t.Errorf("final verify: %v %v", err, rep.Err())
	}
}
