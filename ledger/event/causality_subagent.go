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
//   - subagent.spawned names a spawn_agent call of the session's own agent
//     (no subagent_id) that was proposed and is allowed (its latest verdict
//     allows, or escalated and a human approved, and nothing blocked it)
//     and is executing: the engine records the spawn inside the call's
//     execution, after its exec.started and before its exec.completed.
//     Each proposal spawns at most one sub-agent, an id is spawned once
//     per session, and parent_message_id is the proposal's message.
//   - Every other entry naming a sub-agent follows its subagent.spawned in
//     the same session. The engine records its process's entries there
//     too (agent.spawned, sandbox.canary, agent.ready, agent.exited,
//     agent.crashed); ledgers of earlier engines recorded them outside
//     any session, where they follow a subagent.spawned of that id in
//     some session and are held to the same process rules. A refused
//     registration (agent.ready with token_valid false) is exempt from
//     these: it records the id a process claimed, which is evidence of
//     that process, not a step of the sub-agent.
//   - Its process: one agent.spawned, before its end; at most one
//     accepted registration (sandbox.canary, then agent.ready with
//     token_valid true), after agent.spawned and before its end (the
//     engine records a registration under the same lock as the end, and
//     none after it).
//   - Exactly one end entry (subagent.completed, failed, cancelled,
//     timed_out) per sub-agent; subagent.cancelled names, in by_call_id,
//     the session's agent's cancel_agent call, inside whose execution it
//     is recorded (after exec.started, before exec.completed). After it nothing of the sub-agent is
//     proposed (tool.proposed), starts executing (exec.started) or calls a
//     model (llm.request). The one model call allowed after the end is
//     Shield's tier 2 evaluator (request_id "tier2_...") judging a call the
//     sub-agent proposed before its end for the same message, escalated
//     and not yet judged: one such request per escalated call. An
//     execution that started before the end may complete after it, and its
//     process's exit (agent.exited, agent.crashed) is recorded after it.
//   - A sub-agent executes only the tools it was granted at spawn. A
//     proposal of another tool is recorded and blocked before any tier
//     (rule subagent:not-granted): any other verdict on it, or its
//     execution, is a failure. Every call's exec.started and exec.completed
//     name the tool of its proposal (Check), so the grant is checked
//     against what was proposed.
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
	process uint64 // its agent.spawned, 0 before
	ready   uint64 // its accepted agent.ready, 0 before
	canary  uint64 // its sandbox.canary, 0 before
}

// subFields are the members the sub-agent rules read from any entry.
type subFields struct {
	SubAgentID string `json:"subagent_id"`
	TokenValid *bool  `json:"token_valid"` // agent.ready
	CallID     string `json:"call_id"`
	Tool       string `json:"tool"`
	MessageID  string `json:"message_id"`
	RequestID  string `json:"request_id"` // llm.request
	Decision   string `json:"decision"`   // shield.verdict
	Rule       string `json:"rule"`       // shield.verdict
	ByCallID   string `json:"by_call_id"` // subagent.cancelled
}

// notGrantedRule is the rule of the engine's verdict on a sub-agent's
// proposal of a tool it was not granted.
const notGrantedRule = "subagent:not-granted"

// evaluatorRequestPrefix starts the request_id of Shield's tier 2
// evaluator calls: Shield asking a model about a sub-agent's escalated
// proposal is not the sub-agent calling a model.
const evaluatorRequestPrefix = "tier2_"

// spawnTool and cancelTool are the agent tools that spawn and cancel
// sub-agents.
const (
	spawnTool  = "spawn_agent"
	cancelTool = "cancel_agent"
)

// subagentMember is how a canonical payload names a sub-agent; entries
// without it (most) are not decoded by the sub-agent rules.
var subagentMember = []byte(`"subagent_id":`)

// hasSubagentMember is bytes.Contains(data, subagentMember), searching
// for the bytes after the quote: bytes.Index looks for a needle's first
// byte, and a quote is in every member of a payload.
func hasSubagentMember(data []byte) bool {
	tail := subagentMember[1:]
	for i := 0; ; {
		j := bytes.Index(data[i:], tail)
		if j < 0 {
			return false
		}
		if i+j > 0 && data[i+j-1] == '"' {
			return true
		}
		i += j + 1
	}
}

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
	if !hasSubagentMember(e.Data) {
		return nil
	}
	var f subFields
	if err := json.Unmarshal(e.Data, &f); err != nil || f.SubAgentID == "" {
		return nil
	}
	refused := e.Type == TypeAgentReady && f.TokenValid != nil && !*f.TokenValid
	if e.Session == "" {
		// Process entries of earlier engines, recorded outside any
		// session.
		if refused {
			return nil // a refused registration: the id is only a claim
		}
		session, ok := c.spawnedIDs[f.SubAgentID]
		if !ok {
			return fmt.Errorf("%s names sub-agent %s, which no session spawned before it", e.Type, f.SubAgentID)
		}
		return c.process(e, f, c.subs[subKey{session, f.SubAgentID}])
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
		if e.Type == TypeSubAgentCancelled {
			return c.cancelled(e.Session, f)
		}
		return nil
	}
	if refused {
		return nil
	}
	if err := c.process(e, f, st); err != nil {
		return err
	}
	call := c.calls[callKey{e.Session, f.SubAgentID, f.CallID}]
	switch e.Type {
	case TypeToolProposed, TypeExecStarted:
		if st.ended != 0 {
			what := map[string]string{TypeToolProposed: "proposed call", TypeExecStarted: "started executing call"}[e.Type]
			return fmt.Errorf("sub-agent %s %s %s after its end (%s at seq %d)", f.SubAgentID, what, f.CallID, st.endType, st.ended)
		}
	case TypeLLMRequest:
		if st.ended != 0 && !c.evaluatorAfterEnd(e.Session, f, st) {
			return fmt.Errorf("sub-agent %s called a model (request %s) after its end (%s at seq %d)", f.SubAgentID, f.RequestID, st.endType, st.ended)
		}
	case TypeShieldVerdict:
		// The proposal's tool: checkCall reports a verdict without one.
		if call != nil && !st.tools[call.tool] && (f.Decision != Block || f.Rule != notGrantedRule) {
			return fmt.Errorf("sub-agent %s's call %s of %s, a tool it was not granted at spawn (seq %d), has verdict %s (rule %s), not the engine's block (rule %s)",
				f.SubAgentID, f.CallID, call.tool, st.spawned, f.Decision, f.Rule, notGrantedRule)
		}
	}
	if e.Type == TypeExecStarted {
		tool := f.Tool
		if call != nil {
			tool = call.tool // checkCall reports an exec.started naming another
		}
		if !st.tools[tool] {
			return fmt.Errorf("sub-agent %s executed %s (call %s), a tool it was not granted at spawn (seq %d)", f.SubAgentID, tool, f.CallID, st.spawned)
		}
	}
	return nil
}

// cancelled checks that a cancel names an executing cancel_agent call of
// the session's own agent: the engine cancels a sub-agent only inside
// that call's execution.
func (c *Causality) cancelled(session string, f subFields) error {
	call := c.calls[callKey{session, "", f.ByCallID}]
	switch {
	case call == nil:
		return fmt.Errorf("sub-agent %s cancelled by call %q, which the session's agent never proposed", f.SubAgentID, f.ByCallID)
	case call.tool != cancelTool:
		return fmt.Errorf("sub-agent %s cancelled by call %s, a %s call, not %s", f.SubAgentID, f.ByCallID, call.tool, cancelTool)
	case !call.started || call.done:
		return fmt.Errorf("sub-agent %s cancelled by call %s outside its execution", f.SubAgentID, f.ByCallID)
	}
	return nil
}

// process checks an entry of a sub-agent's process (agent.spawned,
// sandbox.canary, an accepted agent.ready) against what came before it.
// Other entries pass.
func (c *Causality) process(e *ledger.Entry, f subFields, st *subState) error {
	if st == nil {
		return nil
	}
	switch e.Type {
	case TypeAgentSpawned:
		switch {
		case st.process != 0:
			return fmt.Errorf("agent.spawned: a second process for sub-agent %s (the first at seq %d)", f.SubAgentID, st.process)
		case st.ended != 0:
			return fmt.Errorf("agent.spawned: a process for sub-agent %s after its end (%s at seq %d)", f.SubAgentID, st.endType, st.ended)
		}
		st.process = e.Seq
	case TypeSandboxCanary:
		switch {
		case st.process == 0:
			return fmt.Errorf("sandbox.canary of sub-agent %s, which has no process (agent.spawned) before it", f.SubAgentID)
		case st.canary != 0:
			return fmt.Errorf("sandbox.canary of sub-agent %s again (the first at seq %d): its token registers once", f.SubAgentID, st.canary)
		case st.ended != 0:
			return fmt.Errorf("sandbox.canary of sub-agent %s after its end (%s at seq %d)", f.SubAgentID, st.endType, st.ended)
		}
		st.canary = e.Seq
	case TypeAgentReady:
		switch {
		case st.process == 0:
			return fmt.Errorf("agent.ready accepts sub-agent %s, which has no process (agent.spawned) before it", f.SubAgentID)
		case st.ready != 0:
			return fmt.Errorf("agent.ready accepts sub-agent %s a second time (the first at seq %d): its token registers once", f.SubAgentID, st.ready)
		case st.ended != 0:
			return fmt.Errorf("agent.ready accepts sub-agent %s after its end (%s at seq %d)", f.SubAgentID, st.endType, st.ended)
		}
		st.ready = e.Seq
	}
	return nil
}

// evaluatorAfterEnd reports whether an llm.request of a sub-agent after
// its end is Shield's tier 2 evaluator judging a call the sub-agent
// proposed before the end (for the request's message), whose latest
// verdict escalated and which no earlier such request was for. The
// request names no call, so it takes the first that fits.
func (c *Causality) evaluatorAfterEnd(session string, f subFields, st *subState) bool {
	if !strings.HasPrefix(f.RequestID, evaluatorRequestPrefix) {
		return false
	}
	var pick *callState
	for k, call := range c.calls {
		if k.session != session || k.subagent != f.SubAgentID || call.proposed > st.ended || call.messageID != f.MessageID ||
			call.verdict != Escalate || call.approved || call.blocked || call.tier2 {
			continue
		}
		if pick == nil || call.proposed < pick.proposed {
			pick = call
		}
	}
	if pick == nil {
		return false
	}
	pick.tier2 = true
	return true
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
	case call.tool != spawnTool:
		return fmt.Errorf("sub-agent %s spawned for call %s, a %s call, not %s", p.SubAgentID, p.ParentCallID, call.tool, spawnTool)
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
	case !call.started:
		return fmt.Errorf("sub-agent %s spawned for call %s, which had not started executing (the engine spawns inside the call's execution)", p.SubAgentID, p.ParentCallID)
	case call.done:
		return fmt.Errorf("sub-agent %s spawned for call %s after its execution ended", p.SubAgentID, p.ParentCallID)
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
