package event

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/opx-dev/opx/ledger"
)

// Sub-agent rules. A sub-agent's entries are in its parent's session, each
// with its subagent_id; subagent.spawned ties the id to a call of the
// session's own agent. Checked in seq order:
//
//   - subagent.spawned names a call of the session's own agent (no
//     subagent_id) that was proposed and is allowed: its latest verdict
//     allows, or escalated and a human approved, and nothing blocked it.
//     Each proposal spawns at most one sub-agent, an id is spawned once
//     per session, and parent_message_id is the proposal's message. Whether
//     the spawn call itself recorded exec.* is the engine's choice and not
//     checked: the spawn is the call's effect.
//   - Every other entry naming a sub-agent follows its subagent.spawned in
//     the same session. Engine-wide entries (no session: the process's
//     agent.spawned, sandbox.canary, agent.ready, agent.exited,
//     agent.crashed) follow a subagent.spawned of that id in some session.
//     The one exception is a refused registration (agent.ready with
//     token_valid false): it records the id a process claimed, which is
//     evidence of that process, not a step of the sub-agent.
//   - Exactly one end entry (subagent.completed, failed, cancelled,
//     timed_out) per sub-agent. After it nothing of the sub-agent is
//     proposed (tool.proposed), starts executing (exec.started) or calls a
//     model (llm.request; Shield's tier 2 evaluator judging a proposal
//     made before the end is Shield's call, not the sub-agent's). An
//     execution that started before the end may
//     complete after it, and its process's exit (agent.exited,
//     agent.crashed) is recorded after it.
//   - A sub-agent executes only the tools it was granted at spawn. A
//     proposal of another tool is recorded (and blocked before any tier,
//     rule subagent:not-granted); its execution is a failure.
//   - No engine starts or stops while a spawned sub-agent has no end: an
//     orderly stop ends each first (subagent.failed, engine_stopped), and
//     after a crash the next engine records subagent.failed
//     (engine_crashed) for each before its engine.started, as it records
//     the outcome of an interrupted rollback. A sub-agent without an end
//     when the entries end belongs to an engine still running (or one that
//     died, which its next start records), so End reports nothing about
//     sub-agents. A review that checks a session's entries only
//     (ReviewStrictOptions) leaves this rule out: a sub-agent's end may
//     lie beyond what it shows (opx replay --at).
//
// Calls stay keyed by session, sub-agent and call_id (Check), so a
// sub-agent cannot execute under its parent's or a sibling's verdict for
// the same call id: that execution has no proposal of its own.

// subKey is a sub-agent of a session.
type subKey struct{ session, id string }

// subState is what the rules remember of a spawned sub-agent.
type subState struct {
	spawned uint64
	tools   map[string]bool // granted at spawn
	ended   uint64          // its end entry, 0 while running
	endType string
}

// subFields are the members the sub-agent rules read from any entry.
type subFields struct {
	SubAgentID string `json:"subagent_id"`
	TokenValid *bool  `json:"token_valid"` // agent.ready
	CallID     string `json:"call_id"`
	Tool       string `json:"tool"`
	RequestID  string `json:"request_id"` // llm.request
}

// evaluatorRequestPrefix starts the request_id of Shield's tier 2
// evaluator calls: Shield asking a model about a sub-agent's proposal is
// not the sub-agent calling a model.
const evaluatorRequestPrefix = "tier2_"

// subagentMember is how a canonical payload names a sub-agent; entries
// without it (most) are not decoded by the sub-agent rules.
var subagentMember = []byte(`"subagent_id":`)

// checkSubAgent applies the sub-agent rules to e. Payloads that do not
// decode are skipped (Check reports them).
func (c *Causality) checkSubAgent(e *ledger.Entry) error {
	switch e.Type {
	case TypeEngineStarted, TypeEngineStopped:
		if c.partial {
			return nil
		}
		return c.openSubAgents(e)
	case TypeSubAgentSpawned:
		p, err := decode(e.Type, e.Data)
		if err != nil {
			return nil
		}
		return c.spawned(e, p.(*SubAgentSpawned))
	}
	if !bytes.Contains(e.Data, subagentMember) {
		return nil
	}
	var f subFields
	if err := json.Unmarshal(e.Data, &f); err != nil || f.SubAgentID == "" {
		return nil
	}
	if e.Session == "" {
		if e.Type == TypeAgentReady && f.TokenValid != nil && !*f.TokenValid {
			return nil // a refused registration: the id is only a claim
		}
		if c.spawnedIDs[f.SubAgentID] == "" {
			return fmt.Errorf("%s names sub-agent %s, which no session spawned before it", e.Type, f.SubAgentID)
		}
		return nil
	}
	st := c.subs[subKey{e.Session, f.SubAgentID}]
	if st == nil {
		return fmt.Errorf("%s of sub-agent %s, which was never spawned in session %s before it", e.Type, f.SubAgentID, e.Session)
	}
	if SubAgentEnded(e.Type) {
		if st.ended != 0 {
			return fmt.Errorf("sub-agent %s ended twice: %s, after %s at seq %d", f.SubAgentID, e.Type, st.endType, st.ended)
		}
		st.ended, st.endType = e.Seq, e.Type
		return nil
	}
	switch e.Type {
	case TypeToolProposed, TypeExecStarted, TypeLLMRequest:
		if st.ended != 0 && !strings.HasPrefix(f.RequestID, evaluatorRequestPrefix) {
			what := map[string]string{TypeToolProposed: "proposed call", TypeExecStarted: "started executing call",
				TypeLLMRequest: "called a model"}[e.Type]
			if f.CallID != "" {
				what += " " + f.CallID
			}
			return fmt.Errorf("sub-agent %s %s after its end (%s at seq %d)", f.SubAgentID, what, st.endType, st.ended)
		}
	}
	if e.Type == TypeExecStarted && !st.tools[f.Tool] {
		return fmt.Errorf("sub-agent %s executed %s (call %s), a tool it was not granted at spawn (seq %d)", f.SubAgentID, f.Tool, f.CallID, st.spawned)
	}
	return nil
}

// spawned checks a subagent.spawned against the parent's call and opens
// the sub-agent.
func (c *Causality) spawned(e *ledger.Entry, p *SubAgentSpawned) error {
	k := subKey{e.Session, p.SubAgentID}
	if prev := c.subs[k]; prev != nil {
		return fmt.Errorf("sub-agent %s spawned again (first at seq %d)", p.SubAgentID, prev.spawned)
	}
	tools := make(map[string]bool, len(p.Tools))
	for _, t := range p.Tools {
		tools[t] = true
	}
	c.subs[k] = &subState{spawned: e.Seq, tools: tools}
	if c.spawnedIDs[p.SubAgentID] == "" {
		c.spawnedIDs[p.SubAgentID] = e.Session
	}
	call := c.calls[callKey{e.Session, "", p.ParentCallID}]
	switch {
	case e.Session == "":
		return fmt.Errorf("sub-agent %s spawned outside any session", p.SubAgentID)
	case call == nil:
		return fmt.Errorf("sub-agent %s spawned for call %s, which the session's agent never proposed", p.SubAgentID, p.ParentCallID)
	case call.spawned != "":
		return fmt.Errorf("sub-agent %s spawned for call %s, which already spawned sub-agent %s", p.SubAgentID, p.ParentCallID, call.spawned)
	}
	call.spawned = p.SubAgentID
	switch {
	case call.blocked:
		return fmt.Errorf("sub-agent %s spawned for call %s, which was blocked", p.SubAgentID, p.ParentCallID)
	case call.verdict == "":
		return fmt.Errorf("sub-agent %s spawned for call %s, which has no verdict", p.SubAgentID, p.ParentCallID)
	case call.verdict == Escalate && !call.approved:
		return fmt.Errorf("sub-agent %s spawned for call %s while its escalation was unresolved", p.SubAgentID, p.ParentCallID)
	case call.verdict != Allow && call.verdict != Escalate:
		return fmt.Errorf("sub-agent %s spawned for call %s under verdict %q", p.SubAgentID, p.ParentCallID, call.verdict)
	case call.messageID != "" && p.ParentMessageID != call.messageID:
		return fmt.Errorf("sub-agent %s names parent message %q, but its call %s was proposed for message %q",
			p.SubAgentID, p.ParentMessageID, p.ParentCallID, call.messageID)
	}
	return nil
}

// openSubAgents reports the sub-agents without an end when an engine
// starts or stops (at most a few named; the count says the rest).
func (c *Causality) openSubAgents(e *ledger.Entry) error {
	var open []string
	for k, st := range c.subs {
		if st.ended == 0 {
			open = append(open, fmt.Sprintf("%s (session %s, spawned at seq %d)", k.id, k.session, st.spawned))
		}
	}
	if len(open) == 0 {
		return nil
	}
	sort.Strings(open)
	n := len(open)
	open = open[:min(n, 5)]
	more := ""
	if n > len(open) {
		more = fmt.Sprintf(" and %d more", n-len(open))
	}
	why := "an engine ends its sub-agents (subagent.failed, engine_stopped) before it stops"
	if e.Type == TypeEngineStarted {
		why = "a start records subagent.failed (engine_crashed) for those its dead engine left before engine.started"
	}
	// Reported once: each is taken as ended here, and anything of it
	// after this entry is reported as after its end.
	for _, st := range c.subs {
		if st.ended == 0 {
			st.ended, st.endType = e.Seq, e.Type
		}
	}
	return fmt.Errorf("%s while sub-agent %s%s had no end: %s", e.Type, strings.Join(open, ", "), more, why)
}

// ReviewStrictOptions is StrictOptions for a review that feeds the
// causality rules one session's entries (and the engine-wide entries the
// rules read) rather than the whole ledger: the rule that no engine
// starts or stops over a running sub-agent is left out, as the entry that
// ended one may lie beyond the entries shown.
func ReviewStrictOptions() ledger.VerifyOptions {
	c := NewCausality()
	c.partial = true
	return ledger.VerifyOptions{Strict: true, CheckPayload: Check, CheckOrder: c.Check, CheckEnd: c.End}
}
