package engine

import (
	"context"
	"fmt"

	"github.com/opx-dev/opx/chronicle"
	"github.com/opx-dev/opx/engine/executor"
	"github.com/opx-dev/opx/ledger"
)

// RecoveredRollback is the outcome recovery recorded for an interrupted
// rollback.
type RecoveredRollback struct {
	Plan     uint64 // its chronicle.rollback_started
	Rollback uint64 // the chronicle.rollback recovery recorded
}

// RecoverRollbacks records how every interrupted rollback left the
// workspace: for each rollback plan with no outcome (the engine or opx
// rollback died while carrying it out), a chronicle.rollback marked
// interrupted whose post-states are measured from the plan's workspace
// now (chronicle.Recover). The engine runs it at start, before
// engine.started, and opx rollback before it changes anything, so that
// no rollback's effects stay off the record. It returns what it recorded.
func RecoverRollbacks(ctx context.Context, l *ledger.Ledger, rec chronicle.Recorder) ([]RecoveredRollback, error) {
	plans, err := chronicle.OpenPlans(l)
	if err != nil {
		return nil, fmt.Errorf("find interrupted rollbacks: %w", err)
	}
	var out []RecoveredRollback
	for _, p := range plans {
		seq, err := recoverOne(ctx, p, rec)
		if err != nil {
			return out, fmt.Errorf("record the interrupted rollback planned at %d: %w", p.Seq, err)
		}
		out = append(out, RecoveredRollback{Plan: p.Seq, Rollback: seq})
	}
	return out, nil
}

func recoverOne(ctx context.Context, p chronicle.OpenPlan, rec chronicle.Recorder) (uint64, error) {
	ws, err := executor.OpenWorkspace(p.Workspace)
	if err != nil {
		return chronicle.Recover(ctx, p, nil, err, rec)
	}
	defer ws.Close()
	return chronicle.Recover(ctx, p, WorkspaceFS(ws), nil, rec)
}
