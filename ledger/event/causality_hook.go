package event

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/opx-dev/opx/ledger"
)

// Hook rules. A session of an agent audited through its hooks (mode
// claude-code, codex or gemini-cli) holds no call of opx's own agent: each
// tool call the agent asked about is a hook.tool_call naming how many opx
// calls it maps to (calls), and those follow with the ids HookCallID(seq
// of the hook.tool_call, i), through the pipeline like any other call (the
// rules of Check hold for each: judged and allowed, and snapshotted when
// mutating, before exec.started). Checked in seq order, on top of those:
//
//   - In a hook session every proposal is an opx call of an agent's call:
//     its id names a hook.tool_call of the same session recorded before
//     it, an index below that entry's calls, and the agent's calls are
//     proposed in order, each once; none names a sub-agent.
//   - An agent's call runs whole or not at all (engine.HandleExternal):
//     none of its opx calls starts unless every one of them was proposed
//     and may run (its latest verdict allows, or escalated and a human
//     approved, and nothing blocked it).
//   - Only an agent's call is closed as interrupted (exec.completed
//     interrupted): opx runs its own calls and records how they ended.
//   - hook.session, hook.tool_call, hook.event and hook.transcript belong
//     to a hook session.
//
// A session's mode is known from its session.created; where the entries
// checked do not hold it (a review that starts later), the rules that
// need it are left out.

// hookCallState is what the rules remember of an agent's call.
type hookCallState struct {
	calls    int // opx calls it maps to
	proposed int // of them proposed so far (in order)
}

type hookCallKey struct {
	session string
	seq     uint64
}

// modeOf returns a session's mode as its session.created said ("" when
// not seen).
func (c *Causality) modeOf(session string) string { return c.modes[session] }

// checkHookEntry applies the hook rules to the entries that are not about
// one opx call: session.created (the mode), and the hook area's own.
func (c *Causality) checkHookEntry(e *ledger.Entry) error {
	switch e.Type {
	case TypeSessionCreated:
		var p struct {
			Mode string `json:"mode"`
		}
		if json.Unmarshal(e.Data, &p) == nil && e.Session != "" {
			c.modes[e.Session] = p.Mode
		}
		return nil
	case TypeHookSession, TypeHookToolCall, TypeHookEvent, TypeHookTranscript:
	default:
		return nil
	}
	if mode := c.modeOf(e.Session); mode != "" && !HookMode(mode) {
		return fmt.Errorf("%s in session %s of mode %s: only the sessions of an agent audited through its hooks hold one", e.Type, e.Session, mode)
	}
	if e.Type == TypeHookToolCall {
		var p struct {
			Calls int `json:"calls"`
		}
		if json.Unmarshal(e.Data, &p) != nil {
			return nil // Check reports the payload
		}
		c.hookCalls[hookCallKey{e.Session, e.Seq}] = &hookCallState{calls: p.Calls}
	}
	return nil
}

// parseHookCallID splits a hook call id (event.HookCallID) into the seq
// of its agent's call and its index.
func parseHookCallID(id string) (seq uint64, i int, ok bool) {
	if len(id) < 5 || id[0] != 'h' || id[1] != 'k' || !IsHookCallID(id) {
		return 0, 0, false
	}
	s, n, _ := strings.Cut(id[2:], ".")
	seq, err1 := strconv.ParseUint(s, 10, 64)
	i, err2 := strconv.Atoi(n)
	return seq, i, err1 == nil && err2 == nil
}

// checkHookCall applies the hook rules to an entry about opx call f.CallID
// (st its state before the entry, nil if never proposed). Only entries of
// hook sessions, and interrupted ends, are looked at further.
func (c *Causality) checkHookCall(e *ledger.Entry, f *callFields, st *callState) error {
	mode := c.modeOf(e.Session)
	hooked := HookMode(mode)
	if !hooked && !(e.Type == TypeExecCompleted && f.Interrupted) {
		return nil // a model may name a call anything, "hk7.0" too
	}
	seq, i, isHook := parseHookCallID(f.CallID)
	switch e.Type {
	case TypeToolProposed:
		if !isHook || f.SubAgentID != "" {
			return fmt.Errorf("proposal of call %s in a session of an agent audited through its hooks, which is no opx call of an agent's call (hk<seq>.<i>)", f.CallID)
		}
		h := c.hookCalls[hookCallKey{e.Session, seq}]
		switch {
		case h == nil:
			return fmt.Errorf("proposal of call %s names the agent's call at seq %d, which is no hook.tool_call of the session before it", f.CallID, seq)
		case i >= h.calls:
			return fmt.Errorf("proposal of call %s: the agent's call at seq %d maps to %d opx call(s)", f.CallID, seq, h.calls)
		case i != h.proposed:
			return fmt.Errorf("proposal of call %s out of order: the agent's call at seq %d had %d of its opx calls proposed", f.CallID, seq, h.proposed)
		}
		h.proposed++
	case TypeExecStarted:
		h := c.hookCalls[hookCallKey{e.Session, seq}]
		if !isHook || st == nil || h == nil {
			return nil // its proposal was reported
		}
		for j := 0; j < h.calls; j++ {
			if j == i {
				continue
			}
			id := HookCallID(seq, j)
			o := c.calls[callKey{e.Session, "", id}]
			switch {
			case o == nil || j >= h.proposed:
				return fmt.Errorf("call %s executed, but %s of the same agent's call (seq %d) was never proposed: an agent's call runs only when all its opx calls may", f.CallID, id, seq)
			case !mayRun(o):
				return fmt.Errorf("call %s executed, but %s of the same agent's call (seq %d) may not run: an agent's call runs only when all its opx calls may", f.CallID, id, seq)
			}
		}
	case TypeExecCompleted:
		if f.Interrupted && (!isHook || (mode != "" && !hooked)) {
			return fmt.Errorf("call %s recorded as interrupted, which is no agent's call: opx runs its own calls and records how they ended", f.CallID)
		}
	}
	return nil
}

// mayRun reports whether a call was decided allowed: its latest verdict
// allows, or it escalated and a human approved; nothing blocked it.
func mayRun(st *callState) bool {
	return !st.blocked && (st.verdict == Allow || (st.verdict == Escalate && st.approved))
}
