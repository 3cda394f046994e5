package event

import (
	"fmt"
	"sort"

	"github.com/opx-dev/opx/ledger"
)

// checkRollback applies the rollback rules to a plan, an outcome or an
// engine start. Payloads that do not decode are skipped (Check reports
// them).
func (c *Causality) checkRollback(e *ledger.Entry) error {
	switch e.Type {
	case TypeRollbackStarted:
		p, err := decode(e.Type, e.Data)
		if err != nil {
			return nil
		}
		plan := p.(*RollbackStarted)
		c.plans[e.Seq] = plan
		c.planned = true
		if plan.PreSnapshot >= e.Seq {
			return fmt.Errorf("rollback plan names pre_snapshot %d, which does not precede it", plan.PreSnapshot)
		}
	case TypeRollback:
		p, err := decode(e.Type, e.Data)
		if err != nil {
			return nil
		}
		return c.outcome(p.(*Rollback))
	case TypeEngineStarted:
		if open := c.openPlans(); len(open) > 0 {
			return fmt.Errorf("engine started while the rollback planned at seq %d had no outcome (recovery records one before the engine starts)", open[0])
		}
	}
	return nil
}

// outcome checks a chronicle.rollback against its plan and closes it. A
// rollback with no plan before the ledger's first plan was written by an
// engine that predates plans (same format, opx-ledger/1): it is accepted
// as such, since nothing then could have recorded one; after a plan has
// appeared, a rollback without one is a failure.
func (c *Causality) outcome(r *Rollback) error {
	if r.Plan == 0 && !r.Interrupted && !c.planned {
		return nil
	}
	if r.Plan == 0 {
		return fmt.Errorf("rollback has no plan: nothing durable named what it would change before it changed files")
	}
	plan := c.plans[r.Plan]
	if plan == nil {
		return fmt.Errorf("rollback names plan %d, which is not a rollback plan awaiting its outcome", r.Plan)
	}
	delete(c.plans, r.Plan)
	if plan.Snapshot != r.Snapshot || plan.Session != r.Session || plan.PreSnapshot != r.PreSnapshot {
		return fmt.Errorf("rollback (snapshot %d, session %q, pre_snapshot %d) differs from its plan at seq %d (snapshot %d, session %q, pre_snapshot %d)",
			r.Snapshot, r.Session, r.PreSnapshot, r.Plan, plan.Snapshot, plan.Session, plan.PreSnapshot)
	}
	planned := make(map[string]bool, len(plan.Files))
	for _, f := range plan.Files {
		planned[f.Path] = true
	}
	for _, p := range r.Files {
		if !planned[p] {
			return fmt.Errorf("rollback restored %s, which its plan at seq %d does not name", p, r.Plan)
		}
	}
	for _, p := range r.Post {
		if !planned[p.Path] {
			return fmt.Errorf("rollback records a post-state of %s, which its plan at seq %d does not name", p.Path, r.Plan)
		}
	}
	return nil
}

func (c *Causality) openPlans() []uint64 {
	out := make([]uint64, 0, len(c.plans))
	for seq := range c.plans {
		out = append(out, seq)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// End reports every rollback plan that has no outcome once the entries
// end: a rollback interrupted with nothing on record of what it left
// (or one still running while the ledger was read).
func (c *Causality) End() []*ledger.IntegrityError {
	var out []*ledger.IntegrityError
	for _, seq := range c.openPlans() {
		out = append(out, &ledger.IntegrityError{Seq: seq, Kind: ledger.KindCausality,
			Detail: fmt.Sprintf("rollback planned at seq %d has no outcome: it was interrupted (or is still running) and nothing records what it left; "+
				"the engine's start or opx rollback records that", seq)})
	}
	return out
}
