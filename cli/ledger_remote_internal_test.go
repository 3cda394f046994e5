package cli

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// TestSettleRunningPlans: a rollback plan open at the head a verify
// through the engine read to is settled by its outcome after that head
// (the engine was carrying it out), and reported when none comes.
func TestSettleRunningPlans(t *testing.T) {
	planWait = 200 * time.Millisecond
	defer func() { planWait = 10 * time.Second }()
	l, err := ledger.Create(filepath.Join(t.TempDir(), "ledger.db"), ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx := context.Background()
	app, err := l.Append(ctx, ledger.Sync, ledger.Record{Type: event.TypeRollbackStarted, Data: map[string]any{"snapshot": 1, "workspace": "/w", "pre_snapshot": 0, "forced": false, "files": []any{}}})
	if err != nil {
		t.Fatal(err)
	}
	plan := app[0].Seq
	head, _ := l.Head()
	open := func() []*ledger.IntegrityError {
		return []*ledger.IntegrityError{{Seq: plan, Kind: ledger.KindCausality, Detail: "no outcome"}}
	}
	if fs := settleRunningPlans(l.LocalSource(head), head, open)(); len(fs) != 1 {
		t.Errorf("a plan with no outcome at all: %d failures, want 1", len(fs))
	}
	if _, err := l.Append(ctx, ledger.Sync, ledger.Record{Type: event.TypeRollback, Data: map[string]any{"snapshot": 1, "plan": plan, "pre_snapshot": 1, "forced": false, "files": []any{}}}); err != nil {
		t.Fatal(err)
	}
	if fs := settleRunningPlans(l.LocalSource(head), head, open)(); len(fs) != 0 {
		t.Errorf("a plan whose outcome came after the head: %v", fs[0])
	}
}
