package undo

import (
	"context"
	"errors"

	"github.com/opx-dev/opx/chronicle"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// RollbackRequest asks for a rollback of one snapshot or of a session.
type RollbackRequest struct {
	Snapshot uint64
	Session  string
	DryRun   bool
	Force    bool
}

// RollbackStep is one path of a rollback plan, as reports show it.
type RollbackStep struct {
	Path     string          `json:"path"`
	To       event.FileState `json:"to"`
	Now      event.FileState `json:"now"`
	Conflict string          `json:"conflict,omitempty"`
}

// RollbackReport is a rollback's plan and outcome: what `opx rollback
// --json` prints, and what ChronicleService.Rollback returns.
type RollbackReport struct {
	Snapshot    uint64         `json:"snapshot,omitempty"`
	Session     string         `json:"session,omitempty"`
	DryRun      bool           `json:"dry_run"`
	Steps       []RollbackStep `json:"steps"`
	Unchanged   []string       `json:"unchanged"`
	Rollback    uint64         `json:"rollback,omitempty"`     // seq of chronicle.rollback
	PreSnapshot uint64         `json:"pre_snapshot,omitempty"` // what to roll back to undo it
	Restored    []string       `json:"restored"`
	Error       string         `json:"error,omitempty"`
	// ErrorKind classifies Error: conflict, integrity, pruned, omitted,
	// not_found, failed.
	ErrorKind string `json:"error_kind,omitempty"`
}

// Error kinds of a rollback report.
const (
	RollbackConflict  = "conflict"
	RollbackIntegrity = "integrity"
	RollbackPruned    = "pruned"
	RollbackOmitted   = "omitted"
	RollbackNotFound  = "not_found"
	RollbackFailed    = "failed"
)

// Rollback plans a rollback against the workspace now and, unless
// req.DryRun, carries it out (chronicle.Index.Restore), holding the lock
// so no tool runs meanwhile. The report is always returned; err is set
// when the rollback was refused or failed, and the report's ErrorKind
// says why. A ledger failure while recording is returned as is.
func (c *Chronicle) Rollback(ctx context.Context, req RollbackRequest) (*RollbackReport, error) {
	rep := &RollbackReport{Snapshot: req.Snapshot, Session: req.Session, DryRun: req.DryRun,
		Steps: []RollbackStep{}, Unchanged: []string{}, Restored: []string{}}
	if (req.Snapshot == 0) == (req.Session == "") {
		return rep, fail(rep, RollbackNotFound, errors.New("name a snapshot or a session"))
	}
	c.Lock()
	defer c.Unlock()
	if err := c.catchUp(ctx); err != nil {
		return rep, fail(rep, RollbackFailed, err)
	}
	l := c.rec.Ledger()
	now := func(excluded []string) (*chronicle.Tree, error) { return chronicle.ScanOnce(c.fs, excluded) }
	var targets []chronicle.Target
	var err error
	if req.Session != "" {
		targets, err = c.index.SessionTargets(req.Session, l, now)
	} else {
		var s *chronicle.Snapshot
		if s, err = c.index.Get(req.Snapshot); err == nil {
			targets, err = c.index.Targets(s, l, now)
		}
	}
	if err != nil {
		return rep, fail(rep, kindOf(err), err)
	}
	plan, err := chronicle.PlanRollback(c.fs, targets)
	if err != nil {
		return rep, fail(rep, RollbackFailed, err)
	}
	plan.Snapshot, plan.Session, plan.Workspace = req.Snapshot, req.Session, c.dir
	for _, s := range plan.Steps {
		rep.Steps = append(rep.Steps, RollbackStep{Path: s.Path, To: s.To, Now: s.Now, Conflict: s.Conflict})
	}
	rep.Unchanged = append(rep.Unchanged, plan.Unchanged...)
	if req.DryRun || len(plan.Steps) == 0 {
		if c := plan.Conflicts(); len(c) > 0 && !req.Force {
			return rep, fail(rep, RollbackConflict, &chronicle.ConflictError{Conflicts: c})
		}
		return rep, nil
	}
	out, err := c.restore(ctx, plan, req.Force)
	if out != nil {
		rep.Rollback, rep.PreSnapshot = out.Rollback, out.PreSnapshot
		rep.Restored = append(rep.Restored, out.Restored...)
	}
	if err != nil {
		return rep, fail(rep, kindOf(err), err)
	}
	return rep, nil
}

// restore carries out a plan (chronicle.Index.Restore), remembering its
// plan's seq for OwnPlan. The caller holds the lock.
func (c *Chronicle) restore(ctx context.Context, plan *chronicle.Plan, force bool) (*chronicle.Outcome, error) {
	var seq uint64
	plan.Planned = func(s uint64) {
		seq = s
		c.plansM.Lock()
		c.plans[s] = true
		c.plansM.Unlock()
	}
	out, err := c.index.Restore(ctx, plan, c.rec.Ledger(), c.fs, c.rec, force)
	if seq != 0 && out == nil {
		// Planned, but its outcome was not recorded: it is as good as
		// interrupted, and verification must say so.
		c.plansM.Lock()
		c.plans[seq] = false
		c.plansM.Unlock()
	}
	return out, err
}

// OwnPlan reports whether the rollback plan at seq is one this Chronicle
// recorded and is carrying out, or has recorded the outcome of. A
// verification that read the ledger while it ran found the plan without
// its outcome: that rollback was running, not interrupted.
func (c *Chronicle) OwnPlan(seq uint64) bool {
	c.plansM.Lock()
	defer c.plansM.Unlock()
	return c.plans[seq]
}

func fail(rep *RollbackReport, kind string, err error) error {
	rep.Error, rep.ErrorKind = err.Error(), kind
	return err
}

// kindOf classifies a rollback failure for reports and exit codes.
func kindOf(err error) string {
	switch {
	case errors.Is(err, chronicle.ErrConflict):
		return RollbackConflict
	case errors.Is(err, ledger.ErrIntegrity):
		return RollbackIntegrity
	case errors.Is(err, chronicle.ErrPruned):
		return RollbackPruned
	case errors.Is(err, chronicle.ErrOmitted):
		return RollbackOmitted
	case errors.Is(err, chronicle.ErrNoSnapshot), errors.Is(err, chronicle.ErrNothingToRestore):
		return RollbackNotFound
	default:
		return RollbackFailed
	}
}

// ReportError turns a report that travelled over gRPC back into an error
// that matches the sentinel of its kind, for exit codes.
func (r *RollbackReport) ReportError() error {
	if r.Error == "" {
		return nil
	}
	var sentinel error
	switch r.ErrorKind {
	case RollbackConflict:
		sentinel = chronicle.ErrConflict
	case RollbackIntegrity:
		sentinel = ledger.ErrIntegrity
	case RollbackPruned:
		sentinel = chronicle.ErrPruned
	case RollbackOmitted:
		sentinel = chronicle.ErrOmitted
	case RollbackNotFound:
		sentinel = chronicle.ErrNoSnapshot
	default:
		return errors.New(r.Error)
	}
	return &reportError{msg: r.Error, sentinel: sentinel}
}

type reportError struct {
	msg      string
	sentinel error
}

func (e *reportError) Error() string { return e.msg }
func (e *reportError) Unwrap() error { return e.sentinel }
