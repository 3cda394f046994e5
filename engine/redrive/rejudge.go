package redrive

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/engine/judge"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/replay/rerun"
	"github.com/opx-dev/opx/shield"
)

// A session of an agent audited through its hooks (Claude Code, Codex
// CLI, Gemini CLI; rerun.Recording.Hook) cannot be re-driven: the agent
// called its model itself, so no request or answer of it passed through
// opx's gateway to be served again, and opx ran none of its tools. What
// opx decided can be re-derived: Rejudge re-evaluates every recorded
// proposal of the session under the policy each engine run recorded in
// force (its engine.started's policy_blob), with Shield as that run had it
// (workspace, home, protected and read-only paths, the proposal's time),
// and reports each verdict that would change. A decision that would
// change is a divergence, as in a rerun: the record is not what this opx
// decides from it.

// ErrNotHookSession is returned by Rejudge for a session of another
// mode.
var ErrNotHookSession = errors.New("not a session of an agent audited through its hooks")

// RejudgeReport is what re-judging a hook session found: its verdicts
// that would change under the recorded policies (a WhatIfReport whose
// policy is the one recorded in force for each proposal).
type RejudgeReport struct {
	*WhatIfReport
	Mode string `json:"mode"`
	// Agent is the agent as people name it, AgentVersion its version.
	Agent        string `json:"agent,omitempty"`
	AgentVersion string `json:"agent_version,omitempty"`
	// AgentCalls counts the agent's tool calls (hook.tool_call) whose
	// proposals were re-judged; Prompts the user's prompts recorded.
	AgentCalls int `json:"agent_calls"`
	Prompts    int `json:"prompts"`
	// Policies are the hashes of the policies recorded in force, each
	// once, in the order the session's proposals met them.
	Policies []string `json:"policies"`
	// Identical is true when no decision would change (a change of rule
	// alone, reported in Changes, is no divergence).
	Identical bool `json:"identical"`
}

// Rejudge re-judges every recorded proposal of a hook session under the
// policy recorded in force for it. The error is for a record that cannot
// be re-judged (another mode, a policy not recorded); a change is a
// report, not an error.
func Rejudge(rec *rerun.Recording) (*RejudgeReport, error) {
	if rec.Hook == nil {
		return nil, fmt.Errorf("session %s of mode %s: %w", rec.Session, rec.Mode, ErrNotHookSession)
	}
	out := &RejudgeReport{Mode: rec.Mode, AgentCalls: len(rec.Hook.Calls), Prompts: len(rec.Messages), Policies: []string{}}
	if a := rec.Hook.Agent; a != nil {
		out.Agent, out.AgentVersion = event.HookAgentName(a.Agent), a.AgentVersion
	}
	rep, err := judgeAgain(rec, func(en *rerun.Engine, now func() time.Time) (judge.Evaluator, error) {
		text, err := policyText(en)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(out.Policies, en.Started.PolicyHash) {
			out.Policies = append(out.Policies, en.Started.PolicyHash)
		}
		if string(text) == engine.ReadOnlyPolicyText {
			return engine.ReadOnlyPolicy{}, nil
		}
		p, err := shield.ParsePolicy(text)
		if err != nil {
			return nil, fmt.Errorf("%w: the policy recorded at entry %d: %v", rerun.ErrNotReplayable, en.Seq, err)
		}
		return NewRecordedShield(en, p, now), nil
	})
	if err != nil {
		return nil, err
	}
	if len(out.Policies) > 0 {
		rep.PolicyHash = out.Policies[0]
	}
	out.WhatIfReport, out.Identical = rep, rep.DecisionChanges == 0
	return out, nil
}
