package redrive

import (
	"context"
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/engine/executor"
	"github.com/opx-dev/opx/engine/judge"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/replay/rerun"
	"github.com/opx-dev/opx/shield"
)

// WhatIfVerdict is a decision as `opx replay --policy` shows it.
type WhatIfVerdict struct {
	Decision string `json:"decision"`
	Tier     int    `json:"tier"`
	Rule     string `json:"rule"`
	Reason   string `json:"reason"`
}

// Kinds of WhatIfChange: a different decision (allow, block, escalate),
// or the same decision reached by another tier or rule.
const (
	WhatIfDecision = "decision"
	WhatIfRule     = "rule"
)

// WhatIfChange is a recorded proposal Shield would judge otherwise under
// another policy. Old and New are Shield's combined decision (governing:
// any block blocks, else an escalation stands, else the first allow);
// the per-tier verdicts are in OldVerdicts and NewVerdicts.
type WhatIfChange struct {
	// Seq is the recorded verdict that decided (the proposal's seq when
	// none was recorded); ProposalSeq the tool.proposed entry.
	Seq         uint64 `json:"seq"`
	ProposalSeq uint64 `json:"proposal_seq"`
	// SubAgentID names the sub-agent that proposed the call ("" the
	// session's own agent).
	SubAgentID string `json:"subagent_id,omitempty"`
	// AgentCall and AgentTool name, in a session of an agent audited
	// through its hooks, the agent's call (its hook.tool_call) this
	// proposal is one of the opx calls of, and the agent's own tool.
	AgentCall uint64 `json:"agent_call,omitempty"`
	AgentTool string `json:"agent_tool,omitempty"`
	CallID    string `json:"call_id"`
	Tool      string `json:"tool"`
	Arguments string `json:"arguments"`
	// Kind is WhatIfDecision when the decision itself would change, and
	// WhatIfRule when only the tier or rule that reaches it would.
	Kind        string          `json:"kind"`
	Old         WhatIfVerdict   `json:"old"`
	New         WhatIfVerdict   `json:"new"`
	OldVerdicts []WhatIfVerdict `json:"old_verdicts"`
	NewVerdicts []WhatIfVerdict `json:"new_verdicts"`
	// Answered is how the recorded escalation was answered (tier 2 or a
	// human), when Old escalated.
	Answered *WhatIfVerdict `json:"answered,omitempty"`
}

// WhatIfReport is every verdict of a session that would change: the
// decision changes first, then those where only the rule would.
type WhatIfReport struct {
	Session    string `json:"session"`
	PolicyHash string `json:"policy_hash"`
	Proposals  int    `json:"proposals"`
	// Restricted counts the proposals a restriction blocked before any
	// tier (a sub-agent's tool it was not granted, a mutating tool off the
	// record): kept as recorded, since no policy decides them.
	Restricted int `json:"restricted"`
	// DecisionChanges and RuleChanges count Changes by Kind.
	// RecordedRules are the Shield rules versions the session's engine
	// runs were judged by, where they differ from this opx's (Rules): a
	// change may then come from the rules as well as from the policy.
	RecordedRules   []string       `json:"recorded_rules,omitempty"`
	Rules           string         `json:"rules"`
	DecisionChanges int            `json:"decision_changes"`
	RuleChanges     int            `json:"rule_changes"`
	Changes         []WhatIfChange `json:"changes"`
}

// WhatIf re-evaluates every recorded proposal of a session, its
// sub-agents' included, under policy: Shield as each engine run had it
// (its workspace, home, protected and read-only paths as recorded), at
// the time each proposal was recorded (for the rate limit), with the
// policy replaced. Only Shield's own tiers are re-derived: who answered an
// escalation (tier 2, a human) cannot be known for a decision that was
// never asked, so an escalation is reported as such. A proposal a
// restriction blocked (Pipeline.Restrict: a sub-agent's tool it was not
// granted, a mutating tool off the record) was decided before any tier
// and by no policy: it stays as recorded and is never a change.
func WhatIf(rec *rerun.Recording, policy *shield.Policy) (*WhatIfReport, error) {
	rep, err := judgeAgain(rec, func(en *rerun.Engine, now func() time.Time) (judge.Evaluator, error) {
		return NewRecordedShield(en, policy, now), nil
	})
	if err != nil {
		return nil, err
	}
	rep.PolicyHash = policy.Hash().String()
	return rep, nil
}

// judgeAgain re-evaluates every recorded proposal of rec with the
// evaluator evaluator makes for the engine run it was proposed under
// (each made once, with now as its clock), and reports every verdict
// that would change.
func judgeAgain(rec *rerun.Recording, evaluator func(en *rerun.Engine, now func() time.Time) (judge.Evaluator, error)) (*WhatIfReport, error) {
	rep := &WhatIfReport{Session: rec.Session, Proposals: len(rec.Proposals), Changes: []WhatIfChange{}}
	tools, err := executor.NewRegistry(executor.NewMemory(nil)) // the only tools that act on paths their arguments do not name
	if err != nil {
		return nil, err
	}
	var clock time.Time
	now := func() time.Time { return clock }
	shields := map[*rerun.Engine]judge.Evaluator{}
	fallback := &rerun.Engine{}
	if es := rec.Engines(); len(es) > 0 {
		fallback = es[0]
	}
	rep.Rules = shield.RulesVersion
	for _, p := range rec.Proposals {
		en := p.Engine
		if en == nil {
			en = fallback
		}
		ev := shields[en]
		if ev == nil {
			if ev, err = evaluator(en, now); err != nil {
				return nil, err
			}
			shields[en] = ev
			if r := recordedRules(en); r != shield.RulesVersion && !slices.Contains(rep.RecordedRules, r) {
				rep.RecordedRules = append(rep.RecordedRules, r)
			}
		}
		if slices.ContainsFunc(p.Verdicts, func(v rerun.Verdict) bool { return restriction(v.Tier, v.Rule) }) {
			rep.Restricted++
			continue
		}
		clock = p.TS
		newVs := ev.Evaluate(context.Background(), recordedProposal(rec, p, tools))
		var oldVs []judge.Verdict
		var oldSeqs []uint64
		var answered *WhatIfVerdict
		for _, v := range p.Verdicts {
			if strings.HasPrefix(v.Rule, "tier2:") || strings.HasPrefix(v.Rule, "tier3:") {
				// An escalation's hand-over or answer, not Shield's.
				if v.Decision != event.Escalate {
					a := whatIfVerdict(judge.Verdict{Decision: v.Decision, Tier: v.Tier, Rule: v.Rule, Reason: v.Reason})
					answered = &a
				}
				continue
			}
			oldVs = append(oldVs, judge.Verdict{Decision: v.Decision, Tier: v.Tier, Rule: v.Rule, Reason: v.Reason})
			oldSeqs = append(oldSeqs, v.Seq)
		}
		was, is := governing(oldVs), governing(newVs)
		if was.Decision == is.Decision && was.Tier == is.Tier && was.Rule == is.Rule {
			continue
		}
		kind := WhatIfRule
		if was.Decision != is.Decision {
			kind = WhatIfDecision
		}
		c := WhatIfChange{Seq: p.Seq, ProposalSeq: p.Seq, SubAgentID: p.SubAgentID, CallID: p.CallID, Tool: p.Tool, Arguments: p.Arguments, Kind: kind,
			Old: whatIfVerdict(was), New: whatIfVerdict(is), OldVerdicts: whatIfVerdicts(oldVs), NewVerdicts: whatIfVerdicts(newVs)}
		if ac := p.AgentCall; ac != nil {
			c.AgentCall, c.AgentTool = ac.Seq, ac.AgentTool
		}
		for i, v := range oldVs {
			if v == was {
				c.Seq = oldSeqs[i]
				break
			}
		}
		if was.Decision == event.Escalate {
			c.Answered = answered
		}
		rep.Changes = append(rep.Changes, c)
	}
	// Decision changes first, each kind in the ledger's order.
	sort.SliceStable(rep.Changes, func(i, j int) bool {
		return rep.Changes[i].Kind == WhatIfDecision && rep.Changes[j].Kind != WhatIfDecision
	})
	for _, c := range rep.Changes {
		if c.Kind == WhatIfDecision {
			rep.DecisionChanges++
		} else {
			rep.RuleChanges++
		}
	}
	return rep, nil
}

// recordedProposal is a recorded proposal as the pipeline judged it: a
// tool of the engine's (its paths named as its executor names them), or,
// for an opx call of an agent's call through its hooks
// (engine.HandleExternal), a tool the agent named that opx's registry may
// not hold, with what the agent's call could not be understood as
// (hook.tool_call's unknown) judged as such.
func recordedProposal(rec *rerun.Recording, p *rerun.Proposal, tools *executor.Registry) judge.Proposal {
	args := json.RawMessage(p.Arguments)
	call := executor.Call{ID: p.CallID, Tool: p.Tool, Args: args}
	prop := judge.Proposal{Session: rec.Session, SubAgentID: p.SubAgentID, MessageID: p.MessageID, CallID: p.CallID, Tool: p.Tool, Args: args,
		ActionHash: engine.ActionHash(p.Tool, args), Def: executor.ToolDef{Name: p.Tool, Mutating: p.Mutating, ReadOnlyHint: recordedReadOnlyHint(rec, p)},
		Known: true, Paths: tools.Paths(call), Links: p.Links, Manifests: p.Manifests, Sensitive: p.Sensitive, Taint: p.Taint, Toolchain: p.Toolchain}
	if ac := p.AgentCall; ac != nil && len(ac.Unknown) > 0 {
		prop.Unknown = append([]string(nil), ac.Unknown...)
		prop.Known, prop.Paths = false, nil
	}
	return prop
}

// restriction reports whether a recorded verdict is a restriction's
// (Pipeline.Restrict): tier -1, rule subagent:* or otr:*, recorded as the
// call's only verdict before any tier.
func restriction(tier int, rule string) bool {
	return tier == -1 && (strings.HasPrefix(rule, "subagent:") || strings.HasPrefix(rule, "otr:"))
}

// governing is the verdict that decides among Shield's tiers, as Decide
// combines them, except that an allow is shown by the first tier that
// allowed (the policy's rule, rather than tier 1's "no heuristic
// matched").
func governing(vs []judge.Verdict) judge.Verdict {
	d := engine.Decide(vs)
	if d.Decision == event.Allow {
		for _, v := range vs {
			if v.Decision == event.Allow {
				return v
			}
		}
	}
	return d
}

func whatIfVerdict(v judge.Verdict) WhatIfVerdict {
	return WhatIfVerdict{Decision: v.Decision, Tier: v.Tier, Rule: v.Rule, Reason: v.Reason}
}

func whatIfVerdicts(vs []judge.Verdict) []WhatIfVerdict {
	out := make([]WhatIfVerdict, 0, len(vs))
	for _, v := range vs {
		out = append(out, whatIfVerdict(v))
	}
	return out
}
