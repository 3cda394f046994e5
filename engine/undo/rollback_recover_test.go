package undo_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/engine/undo"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/ledgertest"
)

// TestRecoverRollbacks_OnlyTheWorkspaceInUse: an open rollback plan comes
// from the ledger, which may be imported or name a directory that moved.
// Recovery reads and changes only the workspace the caller works on: a
// plan naming another directory is recorded as interrupted and not
// measured, with nothing there hashed or removed; with no workspace in
// use the plan stays open.
func TestRecoverRollbacks_OnlyTheWorkspaceInUse(t *testing.T) {
	ctx := context.Background()
	victim, mine := t.TempDir(), t.TempDir()
	tmp := filepath.Join(victim, ".opx-tmp-0123456789ab")
	for p, c := range map[string]string{filepath.Join(victim, "secret"): "root only\n", tmp: "x"} {
		if err := os.WriteFile(p, []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "ledger.db")
	l, err := ledger.Create(path, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rec := engine.NewRecorder(l)
	pre, err := rec.Record(ctx, ledger.Sync, "", &event.Snapshot{CallID: "rollback-1", Tool: "rollback", Kind: event.KindFiles,
		Files: []event.FileState{{Path: "secret", State: event.StateAbsent}}})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := rec.Record(ctx, ledger.Sync, "", &event.RollbackStarted{Snapshot: 1, Workspace: victim, PreSnapshot: pre,
		Files: []event.FileState{{Path: "secret", State: event.StateAbsent}}})
	if err != nil {
		t.Fatal(err)
	}

	if got, err := undo.RecoverRollbacks(ctx, l, rec, ""); err != nil || len(got) != 0 {
		t.Fatalf("with no workspace: recovered %v, %v; want the plan left open", got, err)
	}
	got, err := undo.RecoverRollbacks(ctx, l, rec, mine)
	if err != nil || len(got) != 1 || got[0].Plan != plan {
		t.Fatalf("recovered %v, %v", got, err)
	}
	e, err := l.Get(got[0].Rollback)
	if err != nil {
		t.Fatal(err)
	}
	p, err := event.Decode(e)
	if err != nil {
		t.Fatal(err)
	}
	r := p.(*event.Rollback)
	if !r.Interrupted || len(r.Post) != 0 || !strings.Contains(r.Error, "not measured") {
		t.Errorf("outcome %+v, want interrupted, not measured, no post-states", r)
	}
	if _, err := os.Stat(tmp); err != nil {
		t.Errorf("recovery removed a file in a directory the ledger named: %v", err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	ledgertest.MustVerify(t, path, event.StrictOptions())
}
