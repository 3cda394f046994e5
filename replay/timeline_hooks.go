package replay

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// A session of a coding agent audited through its hooks (mode
// claude-code, codex or gemini-cli; engine/hooks) is folded like this:
//
//   - hook.session says who the agent is (Timeline.Agent, the first; a
//     later one, after a resume or a change of model, is an event);
//   - each user prompt (client.message) starts a turn (Turn.Hooked);
//   - each hook.tool_call is an AgentCall of the turn: the agent's own
//     tool name and input, and the opx calls it maps to (call ids
//     HookCallID(its seq, i)), which are ToolCalls of the turn as any
//     other, judged, snapshotted and run;
//   - the end of the model's turn (hook.event of kind stop) is the
//     turn's Response, its text the model's last message;
//   - the session's end, post-tool reports of calls opx has no open
//     record of, and any other hook event are events; a transcript
//     stored (hook.transcript) is one of Timeline.Transcripts and an
//     event;
//   - the calls the agent's hook let through unjudged while no engine
//     ran (hook.unrecorded, engine-wide, recorded at the next engine's
//     start) that name the session's agent and its session id are
//     events, wherever they are.
//
// Calls the agent made before opx saw any prompt of it (opx installed
// or its engine started mid-session; agents whose prompts have no hook)
// are held by a turn of their own (Turn.Unprompted).

// HookAgent is a hook.session: the agent of a hook session.
type HookAgent struct {
	Seq uint64 `json:"seq"`
	// Name is the agent as people name it ("Claude Code").
	Name string `json:"name"`
	event.HookSession
}

// Transcript is a hook.transcript: the agent's own transcript of the
// session, stored as a blob (what the model was told and answered; its
// calls did not pass through opx's gateway).
type Transcript struct {
	Seq uint64 `json:"seq"`
	TS  string `json:"ts"`
	event.HookTranscript
}

// AgentCall is one tool call an agent audited through its hooks asked
// about (hook.tool_call): its own tool and input beside what opx made of
// it, the opx calls it maps to, and how it ended.
type AgentCall struct {
	Seq       uint64 `json:"seq"`
	TS        string `json:"ts"`
	ToolUseID string `json:"tool_use_id"`
	AgentTool string `json:"agent_tool"`
	// Input is the agent's input verbatim (InputBlob when it was too
	// large to keep inline); Short says it in a line: the command, the
	// path, the URL, the files of a patch.
	Input     string `json:"input,omitempty"`
	InputBlob string `json:"input_blob,omitempty"`
	InputSize int64  `json:"input_size"`
	Short     string `json:"short"`
	// Kind is what opx understood it as (shell, read, write, web, mcp,
	// ..., unknown); Unknown what it could not understand.
	Kind      string   `json:"kind"`
	Unknown   []string `json:"unknown,omitempty"`
	Sandboxed bool     `json:"sandboxed,omitempty"`
	Model     string   `json:"model,omitempty"`
	// Calls is how many opx calls it maps to; CallIDs those recorded.
	Calls   int      `json:"calls"`
	CallIDs []string `json:"call_ids"`
	// Outcome is how the agent's call ended: blocked or denied when any
	// of its opx calls was, interrupted when its end was never reported,
	// else its first opx call's outcome (all run, or none).
	Outcome   string   `json:"outcome"`
	BlockedBy *Verdict `json:"blocked_by,omitempty"`

	calls []*ToolCall
}

// OpxCalls returns the opx calls of the agent's call, in order (each is
// also one of its turn's ToolCalls).
func (ac *AgentCall) OpxCalls() []*ToolCall { return ac.calls }

// unrecorded is a hook.unrecorded: a call an agent's hook let through
// unjudged while no engine ran, recorded by the next engine to start.
type unrecorded struct {
	ev *Event
	p  *event.HookUnrecorded
}

// finishHooks keeps the calls let through while no engine ran that name
// the session's agent (its agent and its session id): engine-wide
// entries, recorded at an engine's start wherever that falls.
func (b *builder) finishHooks() {
	a := b.t.Agent
	if a == nil {
		return
	}
	for _, u := range b.unrecorded {
		if u.p.Agent == a.Agent && u.p.AgentSessionID == a.AgentSessionID {
			b.floating = append(b.floating, u.ev)
			b.t.read = append(b.t.read, u.ev.Seq)
		}
	}
}

// AgentCallOf returns the agent's call tc is one of the opx calls of; nil
// for any other call.
func (t *Timeline) AgentCallOf(tc *ToolCall) *AgentCall {
	if tc.AgentCall == 0 {
		return nil
	}
	for _, tn := range t.Turns {
		for _, ac := range tn.AgentCalls {
			if ac.Seq == tc.AgentCall {
				return ac
			}
		}
	}
	return nil
}

// hook folds an entry of the hook area into a hook session's timeline;
// it reports whether it took the entry (the rest float as events).
func (b *builder) hook(e ledger.Entry, p event.Payload) bool {
	if !event.HookMode(b.t.Mode) {
		return false
	}
	switch p := p.(type) {
	case *event.HookSession:
		if b.t.Agent != nil {
			return false
		}
		b.t.Agent = &HookAgent{Seq: e.Seq, Name: event.HookAgentName(p.Agent), HookSession: *p}
		b.float(e, summarise(e, p))
		return true
	case *event.HookToolCall:
		tn := b.cur[""]
		if tn == nil {
			tn = b.newTurn(e, "", "", "", "")
			tn.Hooked, tn.Unprompted = true, true
		}
		cwd := ""
		if b.t.Agent != nil {
			cwd = b.t.Agent.Cwd
		}
		ac := &AgentCall{Seq: e.Seq, TS: e.TS, ToolUseID: p.ToolUseID, AgentTool: p.AgentTool, Input: p.Input, InputBlob: p.InputBlob,
			InputSize: p.InputSize, Short: shortInput(p, cwd), Kind: p.Kind, Unknown: p.Unknown, Sandboxed: p.Sandboxed, Model: p.Model,
			Calls: p.Calls, CallIDs: []string{}}
		tn.AgentCalls = append(tn.AgentCalls, ac)
		b.agentCalls[e.Seq] = ac
		return true
	case *event.HookEvent:
		if p.Kind != "stop" {
			return false
		}
		tn := b.cur[""]
		if tn == nil || !tn.Hooked || tn.Response != nil {
			return false
		}
		text := p.Text
		if p.TextBlob != "" {
			text = fmt.Sprintf("(%d bytes, kept as blob %s)", p.Size, short(p.TextBlob))
		}
		tn.Response = &Response{Seq: e.Seq, TS: e.TS, Content: text, Thoughts: []event.Thought{}}
		tn.EndSeq, tn.EndTS = e.Seq, e.TS
		return true
	case *event.HookTranscript:
		b.t.Transcripts = append(b.t.Transcripts, &Transcript{Seq: e.Seq, TS: e.TS, HookTranscript: *p})
		return false // an event too, where the session shows it was stored
	}
	return false
}

// hookProposed ties an opx call of a hook session to its agent's call.
func (b *builder) hookProposed(tc *ToolCall) {
	if !event.HookMode(b.t.Mode) || !event.IsHookCallID(tc.CallID) {
		return
	}
	s, _, _ := strings.Cut(tc.CallID[2:], ".")
	seq, err := strconv.ParseUint(s, 10, 64)
	if ac := b.agentCalls[seq]; err == nil && ac != nil {
		tc.AgentCall = ac.Seq
		ac.calls = append(ac.calls, tc)
		ac.CallIDs = append(ac.CallIDs, tc.CallID)
	}
}

// agentOutcome says how an agent's call ended, from its opx calls'
// outcomes.
func agentOutcome(ac *AgentCall) (string, *Verdict) {
	if len(ac.calls) == 0 {
		return OutcomePending, nil
	}
	for _, tc := range ac.calls {
		if tc.Outcome == OutcomeBlocked || tc.Outcome == OutcomeDenied {
			return tc.Outcome, tc.BlockedBy
		}
	}
	for _, tc := range ac.calls {
		if tc.Outcome == OutcomeInterrupted {
			return OutcomeInterrupted, nil
		}
	}
	if len(ac.calls) < ac.Calls {
		return OutcomePending, nil
	}
	return ac.calls[0].Outcome, nil
}

// shortLimit caps an agent call's input in short.
const shortLimit = 200

// patchFile is a file a patch names (apply_patch's format).
var patchFile = regexp.MustCompile(`(?m)^\*\*\* (Add|Update|Delete) File: (.+)$`)

// shortInput says an agent call's input in a line: its command, the
// paths it names (relative to cwd when under it), its URL or query, the
// files of a patch; else the input itself.
func shortInput(p *event.HookToolCall, cwd string) string {
	if p.Input == "" {
		return fmt.Sprintf("(%d bytes, kept as blob %s)", p.InputSize, short(p.InputBlob))
	}
	var in map[string]any
	if json.Unmarshal([]byte(p.Input), &in) != nil {
		return clip(p.Input)
	}
	rel := func(s string) string {
		if cwd != "" && strings.HasPrefix(s, strings.TrimSuffix(cwd, "/")+"/") {
			return s[len(strings.TrimSuffix(cwd, "/"))+1:]
		}
		return s
	}
	str := func(keys ...string) string {
		for _, k := range keys {
			if s, ok := in[k].(string); ok && s != "" {
				return s
			}
		}
		return ""
	}
	var parts []string
	switch {
	case p.AgentTool == "apply_patch":
		text := str("command", "input", "patch")
		var files []string
		for _, m := range patchFile.FindAllStringSubmatch(text, -1) {
			files = append(files, strings.ToLower(m[1])+" "+rel(strings.TrimSpace(m[2])))
		}
		if len(files) > 0 {
			return clip("patch: " + list(files))
		}
	case str("command", "cmd") != "":
		parts = append(parts, str("command", "cmd"))
	default:
		// Codex's argv: ["bash", "-lc", SCRIPT] is SCRIPT.
		for _, k := range []string{"command", "cmd"} {
			argv, ok := in[k].([]any)
			if !ok || len(argv) == 0 {
				continue
			}
			var ss []string
			for _, a := range argv {
				ss = append(ss, fmt.Sprint(a))
			}
			if len(ss) == 3 && (ss[1] == "-lc" || ss[1] == "-c") {
				ss = ss[2:]
			}
			parts = append(parts, strings.Join(ss, " "))
			break
		}
	}
	if len(parts) == 0 {
		if s := str("file_path", "absolute_path", "notebook_path", "path", "dir_path", "directory"); s != "" {
			parts = append(parts, rel(s))
		}
		if paths, ok := in["paths"].([]any); ok {
			var ss []string
			for _, a := range paths {
				ss = append(ss, rel(fmt.Sprint(a)))
			}
			parts = append(parts, list(ss))
		}
		if s := str("pattern"); s != "" {
			parts = append(parts, "pattern "+s)
		}
		if s := str("url"); s != "" {
			parts = append(parts, s)
		}
		if s := str("query"); s != "" {
			parts = append(parts, "query "+s)
		}
		if edits, ok := in["edits"].([]any); ok {
			parts = append(parts, fmt.Sprintf("%d edits", len(edits)))
		}
	}
	if len(parts) == 0 {
		if s := str("description", "prompt"); s != "" {
			parts = append(parts, s)
		} else {
			return clip(p.Input)
		}
	}
	return clip(strings.Join(parts, ", "))
}

// summariseHook says in one line what an entry of the hook area records;
// "" for others.
func summariseHook(p event.Payload) string {
	switch p := p.(type) {
	case *event.HookSession:
		s := event.HookAgentName(p.Agent)
		if p.AgentVersion != "" {
			s += " " + clip(p.AgentVersion)
		}
		s += " session " + quote(p.AgentSessionID)
		if p.Source != "" {
			s += " (" + clip(p.Source) + ")"
		}
		if p.Model != "" {
			s += ", model " + clip(p.Model)
		}
		s += ", in " + clip(p.Cwd)
		if p.PermissionMode != "" {
			s += ", permission mode " + clip(p.PermissionMode)
		}
		if p.TranscriptPath != "" {
			s += "; its transcript is " + clip(p.TranscriptPath)
		}
		return s
	case *event.HookToolCall:
		return fmt.Sprintf("the agent's %s call (%s, %d opx call(s)): %s", clip(p.AgentTool), p.Kind, p.Calls, shortInput(p, ""))
	case *event.HookEvent:
		text := quote(p.Text)
		if p.TextBlob != "" {
			text = fmt.Sprintf("(%d bytes, blob %s)", p.Size, short(p.TextBlob))
		}
		var s string
		switch p.Kind {
		case "stop":
			s = "the model's turn ended"
			if p.Size > 0 {
				s += ": " + text
			}
		case "session-end":
			s = "the agent's session ended"
			if p.Reason != "" {
				s += " (" + clip(p.Reason) + ")"
			}
		case "post-tool":
			s = fmt.Sprintf("the agent reported the end of its %s call %s, of which opx has no open record", clip(p.AgentTool), clip(p.ToolUseID))
			if p.Size > 0 {
				s += ": " + text
			}
		default:
			s = fmt.Sprintf("agent event %s (%s)", clip(p.Name), p.Kind)
			if p.Reason != "" {
				s += ": " + clip(p.Reason)
			}
		}
		if p.Detail != "" && p.Kind != "post-tool" && p.Kind != "session-end" {
			s += "; " + clip(p.Detail)
		}
		return s
	case *event.HookTranscript:
		s := fmt.Sprintf("the agent's transcript %s stored: %d bytes (blob %s)", quote(p.Path), p.Stored, short(p.Blob))
		if p.Truncated {
			s = fmt.Sprintf("the agent's transcript %s stored: its first %d of %d bytes (blob %s)", quote(p.Path), p.Stored, p.Size, short(p.Blob))
		}
		return s
	case *event.HookUnrecorded:
		s := fmt.Sprintf("while no engine ran, opx hook %s answered %s to %s's %s", clip(p.Name), clip(p.Decision), event.HookAgentName(p.Agent), clip(p.AgentTool))
		if p.Input != "" {
			s += " " + quote(p.Input)
		}
		return s + fmt.Sprintf(" at %s, unjudged and unrecorded then: %s", clip(p.At), clip(p.Reason))
	}
	return ""
}
