package engine

import (
	"context"

	"github.com/opx-dev/opx/engine/judge"
	"github.com/opx-dev/opx/internal/textclip"
	"github.com/opx-dev/opx/ledger/event"
)

// Decide combines the verdicts of the tiers consulted: any block blocks
// (the first one is reported); otherwise an escalation stands, and the one
// naming the highest tier decides who must answer; otherwise all allowed
// and the last allow is returned. No verdict at all decides nothing
// (Decision ""), which the pipeline treats as a block.
//
// An allow that follows an escalation does not answer it: Shield's tier 1
// allows ("no heuristic matched") after tier 0 escalated, and only tier 2
// or 3 may answer an escalation.
func Decide(vs []judge.Verdict) judge.Verdict {
	var esc, last judge.Verdict
	for _, v := range vs {
		switch v.Decision {
		case event.Block:
			return v
		case event.Escalate:
			if esc.Decision == "" || v.Tier > esc.Tier {
				esc = v
			}
		case event.Allow:
			last = v
		default:
			// An evaluator that says something else has not allowed.
			return judge.Verdict{Decision: event.Block, Tier: v.Tier, Rule: "pipeline:unknown-decision", Reason: "a verdict with decision " + textclip.Cut(v.Decision, 32) + " blocks"}
		}
	}
	if esc.Decision != "" {
		return esc
	}
	return last
}

// escalate finds the answer to an escalation: tier 2 (the LLM evaluator)
// when the escalation names tier 2 and one is configured, a human (tier 3)
// otherwise. Every step is recorded as a verdict through record, so the
// latest verdict before execution is the one that governs it, and a human's
// answer is recorded (approval.resolved) before the verdict that follows
// it. The returned verdict is an allow or a block. The error is non-nil
// only when the ledger failed.
func (p *Pipeline) escalate(ctx context.Context, prop judge.Proposal, esc judge.Verdict, record func(judge.Verdict) error) (judge.Verdict, error) {
	var ask judge.Verdict
	if esc.Tier == 2 {
		if p.Tier2 != nil {
			v, err := p.Tier2.Judge(ctx, prop, esc)
			if err != nil {
				return judge.Verdict{}, err
			}
			if v.Decision != event.Allow && v.Decision != event.Block {
				v = judge.Verdict{Decision: event.Block, Tier: 2, Rule: "tier2:malformed", Reason: "the tier 2 evaluator decided " + textclip.Cut(v.Decision, 32) + "; only allow or block answer an escalation"}
			}
			v.Tier = 2
			return v, record(v)
		}
		ask = judge.Verdict{Decision: event.Escalate, Tier: 3, Rule: "tier2:unconfigured",
			Reason: esc.Rule + ": " + esc.Reason + "; no tier 2 evaluator is configured, so a human (tier 3) must answer"}
	} else {
		ask = judge.Verdict{Decision: event.Escalate, Tier: 3, Rule: "tier3:human", Reason: esc.Rule + ": " + esc.Reason + "; waiting for a human (tier 3)"}
	}
	// The hand-over to a human is itself recorded, so approval.resolved
	// always follows an escalation that names tier 3.
	if err := record(ask); err != nil {
		return judge.Verdict{}, err
	}
	var no judge.Verdict
	switch {
	case p.Approvals == nil:
		no = judge.Verdict{Decision: event.Block, Tier: 3, Rule: "tier3:unavailable", Reason: "no one can approve actions here, so the escalation blocks"}
	}
	if no.Rule != "" {
		return no, record(no)
	}
	var final judge.Verdict
	_, err := p.Approvals.Ask(ctx, prop, ask.Reason, func(o ApprovalOutcome) error {
		final = tier3Verdict(o)
		return record(final)
	})
	if err != nil {
		return judge.Verdict{}, err
	}
	return final, nil
}
