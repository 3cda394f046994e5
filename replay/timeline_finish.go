package replay

import (
	"slices"
	"sort"
	"time"

	"github.com/opx-dev/opx/ledger/event"
)

// finish places events, works out outcomes and statuses, and totals.
func (b *builder) finish() *Timeline {
	t := b.t
	for _, c := range b.cands {
		if c.lo <= t.LastSeq && c.hi >= t.FirstSeq {
			b.floating = append(b.floating, c.ev)
			t.read = append(t.read, c.ev.Seq)
		}
	}
	if t.Engine != nil {
		t.read = append(t.read, t.Engine.Seq)
	}
	b.finishHooks()
	slices.Sort(t.read)
	t.read = slices.Compact(t.read)
	sort.SliceStable(b.floating, func(i, j int) bool { return b.floating[i].Seq < b.floating[j].Seq })
	for _, ev := range b.floating {
		if tn := b.turnAt(ev.Seq); tn != nil {
			tn.Events = append(tn.Events, ev)
		} else {
			t.Events = append(t.Events, ev)
		}
	}
	for _, tn := range t.Turns {
		finishTurn(tn)
	}
	b.finishSubAgents()
	for _, s := range t.Snapshots {
		s.Paths = nonNil(s.Paths)
		sort.Strings(s.Paths)
	}
	t.Totals = totals(t)
	return t
}

// turnAt returns the turn whose window holds seq: from its message to its
// end, or, when it has none, to the next turn or the session's last entry.
func (b *builder) turnAt(seq uint64) *Turn {
	turns := b.t.Turns
	for i := len(turns) - 1; i >= 0; i-- {
		tn := turns[i]
		if tn.Seq > seq {
			continue
		}
		end := tn.EndSeq
		if end == 0 {
			end = b.t.LastSeq
			if i+1 < len(turns) {
				end = turns[i+1].Seq - 1
			}
		}
		if seq <= end {
			return tn
		}
		return nil
	}
	return nil
}

func finishTurn(tn *Turn) {
	switch {
	case tn.Response != nil:
		tn.Status = TurnAnswered
	case tn.EndSeq != 0:
		tn.Status = TurnError
	default:
		tn.Status = TurnOpen
	}
	if tn.Response == nil && len(tn.Streamed.text) > 0 {
		tn.Streamed.PartialText = string(tn.Streamed.text)
	}
	if tn.EndSeq != 0 {
		tn.DurationMS = msBetween(tn.TS, tn.EndTS)
	}
	for _, tc := range tn.ToolCalls {
		tc.Outcome, tc.BlockedBy = outcome(tc)
	}
	for _, ac := range tn.AgentCalls {
		ac.Outcome, ac.BlockedBy = agentOutcome(ac)
	}
}

// outcome says what became of a call. A human's (or the timeout's) no
// makes it denied, although the engine records the denial as a tier 3
// block verdict too; otherwise a block wins over everything: if a blocked
// call shows an execution too, the ledger says both (and strict verify
// reports the causality failure).
func outcome(tc *ToolCall) (string, *Verdict) {
	a := tc.Approval
	if tc.Seq != 0 && a != nil && a.ResolvedSeq != 0 && !a.Approved {
		return OutcomeDenied, nil
	}
	for _, v := range tc.Verdicts {
		if v.Decision == event.Block {
			return OutcomeBlocked, v
		}
	}
	switch {
	case tc.Seq == 0:
		return OutcomeNotProposed, nil
	case tc.Exec != nil && tc.Exec.Interrupted:
		return OutcomeInterrupted, nil
	case tc.Exec != nil && tc.Exec.Status == event.ExecOK:
		return OutcomeCompleted, nil
	case tc.Exec != nil && tc.Exec.Status == event.ExecExited:
		return OutcomeExited, nil
	case tc.Exec != nil && tc.Exec.Status == event.ExecError:
		return OutcomeFailed, nil
	case tc.Exec != nil:
		return OutcomeRunning, nil
	case len(tc.Verdicts) == 0:
		return OutcomePending, nil
	case tc.Verdicts[len(tc.Verdicts)-1].Decision == event.Escalate && (a == nil || a.ResolvedSeq == 0):
		return OutcomeEscalated, nil
	default:
		return OutcomeAllowed, nil
	}
}

// msBetween returns the milliseconds from ts a to ts b, 0 if either does
// not parse or b is earlier.
func msBetween(a, b string) int64 {
	ta, err1 := time.Parse(time.RFC3339Nano, a)
	tb, err2 := time.Parse(time.RFC3339Nano, b)
	if err1 != nil || err2 != nil || tb.Before(ta) {
		return 0
	}
	return tb.Sub(ta).Milliseconds()
}

// nonNil returns s, or an empty slice for nil, so JSON says [] not null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
