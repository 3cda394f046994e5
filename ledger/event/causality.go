package event

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/opx-dev/opx/ledger"
)

// Causality checks, entry by entry in seq order, the rules that span
// entries (DESIGN, "Entry types"): every exec.* follows a tool.proposed and
// an allowing verdict (or an approval) for its call_id; a mutating tool's
// chronicle.snapshot precedes its exec.started; no blocked call_id is ever
// executed. Calls are told apart by session, sub-agent and call_id. A
// ledger.note that is about an entry (an annotation) names one before it.
//
// Sub-agents have rules of their own (causality_subagent.go): each is
// spawned by an allowed, executing spawn_agent call of the session's own
// agent before anything of it is recorded, has one process that registers
// once, ends exactly once, proposes, executes and calls a model only
// before its end, executes only the tools it was granted, and has ended
// before an engine starts or stops. Every execution names its proposal's
// tool.
//
// The sessions of agents audited through their hooks (mode claude-code,
// codex, gemini-cli) have rules of their own too (causality_hook.go):
// every proposal there is an opx call of a recorded agent's call, an
// agent's call runs whole or not at all, and only an agent's call is
// closed as interrupted.
//
// Rollbacks follow the write-ahead rule too: every chronicle.rollback names
// its chronicle.rollback_started (the plan, recorded before any path
// changed), with the same target and pre-snapshot and only planned paths;
// an engine does not start while a plan has no outcome (its recovery
// records one first); and a plan still without an outcome at the end is
// reported by End.
//
// The zero value is not usable; call NewCausality. Use Check as
// ledger.VerifyOptions.CheckOrder and End as CheckEnd.
type Causality struct {
	calls map[callKey]*callState
	plans map[uint64]*RollbackStarted // rollback plans with no outcome yet, by seq
	// planned is set by the first rollback plan: from there on, every
	// rollback must name its plan (before it, rollbacks were recorded by
	// engines that wrote no plans).
	planned bool
	// subs are the spawned sub-agents by session and id; spawnedIDs the
	// session that first spawned each id (for process entries of earlier
	// engines, recorded outside any session).
	subs       map[subKey]*subState
	spawnedIDs map[string]string
	partial    bool // fed a session's entries only (ReviewStrictOptions)
	// modes are the sessions' modes (session.created), hookCalls the
	// agents' calls of hook sessions by session and seq
	// (causality_hook.go).
	modes     map[string]string
	hookCalls map[hookCallKey]*hookCallState
}

type callKey struct{ session, subagent, callID string }

type callState struct {
	proposed  uint64
	messageID string
	tool      string // the proposal's tool
	action    string // the proposal's action hash
	mutating  bool
	verdict   string // the latest decision
	blocked   bool   // any block, or an approval denied
	approved  bool
	snapshot  bool
	started   bool
	done      bool   // exec.completed or exec.failed recorded
	tier2     bool   // a tier 2 request after its sub-agent's end was for it
	spawned   string // the sub-agent this call spawned
}

// NewCausality returns a checker with no calls seen.
func NewCausality() *Causality {
	return &Causality{calls: map[callKey]*callState{}, plans: map[uint64]*RollbackStarted{},
		subs: map[subKey]*subState{}, spawnedIDs: map[string]string{}, modes: map[string]string{}, hookCalls: map[hookCallKey]*hookCallState{}}
}

// callFields are the members the causality rules read.
type callFields struct {
	SubAgentID string `json:"subagent_id"`
	MessageID  string `json:"message_id"`
	CallID     string `json:"call_id"`
	Tool       string `json:"tool"`
	Mutating   bool   `json:"mutating"`
	Decision   string `json:"decision"`
	Approved   bool   `json:"approved"`
	ActionHash string `json:"action_hash"`
	// Interrupted is exec.completed's: an agent's call closed without
	// its report.
	Interrupted bool `json:"interrupted"`
}

// read fills f from data exactly as json.Unmarshal does. Strings read in
// place share data's bytes (a store's entries are the file's mapped
// pages): f is valid while data is, and what outlives the entry is
// cloned (checkCallRules, for a proposal). It reads the
// members in place (ledger.Members) when each is plain: an ASCII key that
// is one of f's names exactly, or no case variant of one (encoding/json
// matches names case-insensitively), a string without escapes in valid
// UTF-8 for a string field, true, false or null. Anything else is left to
// json.Unmarshal. Strict verify reads these fields of most entries.
func (f *callFields) read(data []byte) error {
	plain := true
	ok := ledger.Members(data, func(k, raw []byte) bool {
		var str *string
		var flag *bool
		switch string(k) {
		case "subagent_id":
			str = &f.SubAgentID
		case "message_id":
			str = &f.MessageID
		case "call_id":
			str = &f.CallID
		case "tool":
			str = &f.Tool
		case "decision":
			str = &f.Decision
		case "action_hash":
			str = &f.ActionHash
		case "mutating":
			flag = &f.Mutating
		case "approved":
			flag = &f.Approved
		case "interrupted":
			flag = &f.Interrupted
		default:
			plain = !foldsToName(k, callFieldNames)
			return plain
		}
		switch {
		case string(raw) == "null": // leaves the field as it is, as encoding/json does
		case str != nil && string(raw) == `""`:
			*str = ""
		case str != nil && len(raw) > 2 && plainString(raw):
			// Shares data's bytes: no copy for a field only compared.
			*str = unsafe.String(&raw[1], len(raw)-2)
		case flag != nil && (string(raw) == "true" || string(raw) == "false"):
			*flag = string(raw) == "true"
		default:
			plain = false
		}
		return plain
	})
	if ok && plain {
		return nil
	}
	// Decoded into a fresh value, copied: f itself does not reach
	// json.Unmarshal, so the callers' callFields stay on their stacks.
	var g callFields
	err := json.Unmarshal(data, &g)
	*f = g
	return err
}

// name is how a rule's finding names the call: its id and sub-agent.
// Built only for a finding (a string per entry otherwise).
func (f *callFields) name() string {
	if f.SubAgentID != "" {
		return "call " + f.CallID + " of sub-agent " + f.SubAgentID
	}
	return "call " + f.CallID
}

// callFieldNames are callFields' member names.
var callFieldNames = []string{"subagent_id", "message_id", "call_id", "tool", "decision", "action_hash", "mutating", "approved", "interrupted"}

// foldsToName reports whether encoding/json could match key to one of
// names (which are ASCII) though it is none of them exactly: a case
// variant, or any key that is not ASCII (its folding is Unicode's:
// U+212A KELVIN SIGN matches k).
func foldsToName(key []byte, names []string) bool {
	for _, c := range key {
		if c >= utf8.RuneSelf {
			return true
		}
	}
	for _, n := range names {
		if len(n) == len(key) && strings.EqualFold(n, string(key)) {
			return true
		}
	}
	return false
}

// plainString reports whether raw is a JSON string that encoding/json
// decodes to its bytes as they are: no escapes, valid UTF-8.
func plainString(raw []byte) bool {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return false
	}
	in := raw[1 : len(raw)-1]
	return bytes.IndexByte(in, '\\') < 0 && bytes.IndexByte(in, '"') < 0 && utf8.Valid(in)
}

// Check observes one entry and reports a rule it breaks (the first, when
// it breaks several). Entries of other types, and payloads that do not
// decode (Check reports those), are skipped.
func (c *Causality) Check(e *ledger.Entry) error {
	errSub := c.checkSubAgent(e)
	var err error
	switch e.Type {
	case TypeRollbackStarted, TypeRollback, TypeEngineStarted:
		err = c.checkRollback(e)
	case TypeSessionCreated, TypeHookSession, TypeHookToolCall, TypeHookEvent, TypeHookTranscript:
		err = c.checkHookEntry(e)
	case TypeNote:
		err = checkNoteAbout(e)
	default:
		err = c.checkCall(e)
	}
	if errSub != nil {
		return errSub
	}
	return err
}

// checkNoteAbout applies the rule of an annotation: the entry a note is
// about was recorded before it (a note cannot vouch for what came after).
func checkNoteAbout(e *ledger.Entry) error {
	var n struct {
		About uint64 `json:"about"`
	}
	if err := json.Unmarshal(e.Data, &n); err != nil || n.About == 0 {
		return nil // an undecodable payload is reported by the payload check
	}
	if n.About >= e.Seq {
		return fmt.Errorf("ledger.note is about entry %d, which is not before it", n.About)
	}
	return nil
}

// checkCall applies the rules about one tool call: those of every call,
// then those of an agent's call through its hooks (causality_hook.go).
func (c *Causality) checkCall(e *ledger.Entry) error {
	switch e.Type {
	case TypeToolProposed, TypeShieldVerdict, TypeApprovalResolved, TypeSnapshot,
		TypeExecStarted, TypeExecCompleted, TypeExecFailed:
	default:
		return nil
	}
	var f callFields
	if err := f.read(e.Data); err != nil || f.CallID == "" {
		return nil
	}
	st := c.calls[callKey{e.Session, f.SubAgentID, f.CallID}]
	err := c.checkCallRules(e, &f)
	if herr := c.checkHookCall(e, &f, st); err == nil {
		err = herr
	}
	return err
}

// checkCallRules applies the rules of every tool call.
func (c *Causality) checkCallRules(e *ledger.Entry, f *callFields) error {
	k := callKey{e.Session, f.SubAgentID, f.CallID}
	st := c.calls[k]
	if e.Type == TypeToolProposed {
		// Models reuse call ids (per message, per round); the latest
		// proposal of an id is the call the following entries are about.
		// f's strings share the entry's bytes (callFields.read): what is
		// kept is copied.
		k = callKey{k.session, strings.Clone(f.SubAgentID), strings.Clone(f.CallID)}
		c.calls[k] = &callState{proposed: e.Seq, messageID: strings.Clone(f.MessageID), tool: strings.Clone(f.Tool),
			mutating: f.Mutating, action: strings.Clone(f.ActionHash)}
		return nil
	}
	if st == nil {
		if e.Type == TypeSnapshot {
			return nil // rollbacks snapshot outside any tool call
		}
		return fmt.Errorf("%s for %s, which was never proposed", e.Type, f.name())
	}
	switch e.Type {
	case TypeShieldVerdict:
		if f.ActionHash != st.action {
			return fmt.Errorf("verdict for %s judged action %s, but the proposal at seq %d is %s", f.name(), short(f.ActionHash), st.proposed, short(st.action))
		}
		st.verdict = keptDecision(f.Decision)
		if f.Decision == Block {
			st.blocked = true
		}
	case TypeApprovalResolved:
		if st.verdict != Escalate {
			return fmt.Errorf("approval for %s, which was not escalated", f.name())
		}
		st.approved = f.Approved
		st.blocked = st.blocked || !f.Approved
	case TypeSnapshot:
		st.snapshot = true
	case TypeExecStarted:
		// Marked started even when a rule is broken, so its completion is
		// not reported a second time.
		defer func() { st.started = true }()
		switch {
		case st.blocked:
			return fmt.Errorf("%s executed although it was blocked", f.name())
		case st.verdict == "":
			return fmt.Errorf("%s executed without a verdict", f.name())
		case st.verdict == Escalate && !st.approved:
			return fmt.Errorf("%s executed while its escalation was unresolved", f.name())
		case st.verdict != Allow && st.verdict != Escalate:
			return fmt.Errorf("%s executed under verdict %q", f.name(), st.verdict)
		case st.mutating && !st.snapshot:
			return fmt.Errorf("mutating %s executed without a snapshot first", f.name())
		case st.started:
			return fmt.Errorf("%s executed twice", f.name())
		case f.Tool != st.tool:
			// The action hash is not recomputed here, so the tool it
			// names is compared: what ran is what was proposed.
			return fmt.Errorf("%s executed %q, but the proposal at seq %d is %q", f.name(), f.Tool, st.proposed, st.tool)
		case f.ActionHash != st.action:
			return fmt.Errorf("%s executed action %s, but the proposal at seq %d is %s", f.name(), short(f.ActionHash), st.proposed, short(st.action))
		}
	case TypeExecCompleted, TypeExecFailed:
		switch {
		case !st.started:
			return fmt.Errorf("%s for %s, which never started", e.Type, f.name())
		case st.done:
			return fmt.Errorf("%s for %s, which already ended", e.Type, f.name())
		}
		st.done = true
		if f.Tool != st.tool {
			return fmt.Errorf("%s for %s names %q, but the proposal at seq %d is %q", e.Type, f.name(), f.Tool, st.proposed, st.tool)
		}
	}
	return nil
}

// keptDecision is a verdict's decision to keep in a call's state: the
// package's constant for a known one, else a copy (f's strings share the
// entry's bytes).
func keptDecision(d string) string {
	switch d {
	case Allow:
		return Allow
	case Block:
		return Block
	case Escalate:
		return Escalate
	}
	return strings.Clone(d)
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// StrictOptions returns verify options that check everything this package
// knows: canonical form, each payload, and causality in order and at the
// end.
func StrictOptions() ledger.VerifyOptions {
	c := NewCausality()
	return ledger.VerifyOptions{Strict: true, CheckPayload: Check, CheckOrder: c.Check, CheckEnd: c.End}
}
