package projection

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// The sessions by mode, and the calls of the agents audited through their
// hooks (mode claude-code, codex, gemini-cli) by their own tool names:
//
//	session mode                                sessions created
//	agent_tool mode tool calls|blocked|interrupted
//	hook_unrecorded agent                       calls a hook let through while no engine ran
//
// An agent's call is blocked when a verdict blocked one of its opx calls
// (a human's denial is a tier 3 block), interrupted when the agent never
// reported its end. Until its end the fold keeps, under keys whose first
// part starts with stateMark (never counters: ReadMetrics leaves them
// out), each hook session's mode and each open agent call's tool.

// stateMark starts the first part of the keys of the fold's own state.
const stateMark = "~"

// hookCallMember is how a canonical payload names a hook call id.
var hookCallMember = []byte(`"call_id":"hk`)

// hooks counts sessions by mode and the agents' calls.
func (Metrics) hooks(b ledger.Bucket, e *ledger.Entry) error {
	switch e.Type {
	case event.TypeSessionCreated:
		mode := str(e, "mode")
		if err := add(b, 1, "session", mode); err != nil {
			return err
		}
		if event.HookMode(mode) {
			return b.Put(key(stateMark+"hook_mode", e.Session), []byte(mode))
		}
	case event.TypeHookToolCall:
		mode := string(b.Get(key(stateMark+"hook_mode", e.Session)))
		if mode == "" {
			mode = "unknown"
		}
		tool := str(e, "agent_tool")
		if err := add(b, 1, "agent_tool", mode, tool, "calls"); err != nil {
			return err
		}
		return b.Put(key(stateMark+"hook_call", e.Session, strconv.FormatUint(e.Seq, 10)), []byte(mode+"\x00"+tool))
	case event.TypeHookUnrecorded:
		return add(b, 1, "hook_unrecorded", str(e, "agent"))
	case event.TypeShieldVerdict:
		if !bytes.Contains(e.Data, hookCallMember) {
			return nil
		}
		f := ledger.Fields(e.Data, "decision", "call_id")
		if ledger.RawString(f[0]) == event.Block {
			return hookCallEnd(b, e.Session, ledger.RawString(f[1]), "blocked")
		}
	case event.TypeExecCompleted, event.TypeExecFailed:
		if !bytes.Contains(e.Data, hookCallMember) {
			return nil
		}
		f := ledger.Fields(e.Data, "call_id", "interrupted")
		id := ledger.RawString(f[0])
		if !strings.HasSuffix(id, ".0") {
			return nil // the agent's call ends with its first opx call's end
		}
		how := ""
		if string(f[1]) == "true" {
			how = "interrupted"
		}
		return hookCallEnd(b, e.Session, id, how)
	}
	return nil
}

// hookCallEnd ends the agent's call whose opx call is id, counting it
// under how ("" counts nothing): its first end is the one counted.
func hookCallEnd(b ledger.Bucket, session, id, how string) error {
	if !event.IsHookCallID(id) {
		return nil
	}
	seq, _, _ := strings.Cut(id[2:], ".")
	k := key(stateMark+"hook_call", session, seq)
	v := b.Get(k)
	if v == nil {
		return nil // ended already, or no agent's call of a hook session
	}
	mode, tool, _ := strings.Cut(string(v), "\x00")
	if how != "" {
		if err := add(b, 1, "agent_tool", mode, tool, how); err != nil {
			return err
		}
	}
	return b.Delete(k)
}
