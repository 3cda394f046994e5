package event

import (
	"errors"
	"fmt"
	"regexp"
)

// The hook area: sessions of a coding-agent CLI (Claude Code, Codex CLI,
// Gemini CLI) that opx audits through the CLI's hooks (`opx hook AGENT`,
// engine/hooks). Their tool calls are recorded as opx's own are
// (tool.proposed, shield.verdict, chronicle.snapshot, exec.started,
// exec.completed, under the call ids hook.tool_call names); these entries
// add what only the agent knows: who it is, its own name and input for
// each call, its session events and its transcript.
const (
	TypeHookSession    = "hook.session"
	TypeHookToolCall   = "hook.tool_call"
	TypeHookEvent      = "hook.event"
	TypeHookTranscript = "hook.transcript"
	TypeHookUnrecorded = "hook.unrecorded"
)

// The session modes of the agents audited through their hooks.
const (
	ModeClaudeCode = "claude-code"
	ModeCodex      = "codex"
	ModeGeminiCLI  = "gemini-cli"
)

// HookMode reports whether mode is that of an agent audited through its
// hooks.
func HookMode(mode string) bool {
	return mode == ModeClaudeCode || mode == ModeCodex || mode == ModeGeminiCLI
}

// HookAgentName is an agent of a hook entry (claude, codex, gemini) as
// people name it; the name itself for another.
func HookAgentName(agent string) string {
	switch agent {
	case "claude":
		return "Claude Code"
	case "codex":
		return "Codex CLI"
	case "gemini":
		return "Gemini CLI"
	}
	return agent
}

func init() {
	register(func() Payload { return &HookSession{} })
	register(func() Payload { return &HookToolCall{} })
	register(func() Payload { return &HookEvent{} })
	register(func() Payload { return &HookTranscript{} })
	register(func() Payload { return &HookUnrecorded{} })
}

// hookAgents are the agents a hook entry may name (`opx hook AGENT`).
var hookAgents = []string{"claude", "codex", "gemini"}

// HookSession says which agent a session (mode claude-code, codex or
// gemini-cli) is: recorded after its session.created, and again when
// what the agent says of itself changes (another model, a resumed
// session).
type HookSession struct {
	Agent          string `json:"agent"` // claude, codex or gemini
	AgentVersion   string `json:"agent_version,omitempty"`
	AgentSessionID string `json:"agent_session_id"`
	Model          string `json:"model,omitempty"`
	Cwd            string `json:"cwd"`
	ProjectDir     string `json:"project_dir,omitempty"`
	TranscriptPath string `json:"transcript_path,omitempty"`
	PermissionMode string `json:"permission_mode,omitempty"`
	// Source is why the agent says the session started (startup,
	// resume, clear, ...); "" when the session's first event was not its
	// start (opx was installed or its engine started mid-session).
	Source string `json:"source,omitempty"`
}

func (*HookSession) Type() string { return TypeHookSession }

func (h *HookSession) Validate() error {
	return firstErr(oneOf("agent", h.Agent, hookAgents...), need("agent_session_id", h.AgentSessionID, "cwd", h.Cwd))
}

// hookCallID is the form of the call ids of a hook tool call: "hk" and
// the seq of its hook.tool_call, then "." and the index of the opx call
// among the ones it maps to.
var hookCallID = regexp.MustCompile(`^hk[1-9][0-9]{0,19}\.[0-9]{1,3}$`)

// HookCallID is the id of the i-th opx call of the agent call recorded
// as hook.tool_call at seq.
func HookCallID(seq uint64, i int) string { return fmt.Sprintf("hk%d.%d", seq, i) }

// IsHookCallID reports whether id has the form HookCallID gives.
func IsHookCallID(id string) bool { return hookCallID.MatchString(id) }

// HookToolCall is one tool call an agent asked its hook about, before
// it is judged: the agent's own tool name and input verbatim, and what
// opx understood it as (agents/toolmap). Its opx calls follow, with the
// ids HookCallID(seq of this entry, i) for i < Calls; any block among
// them blocks the agent's call.
type HookToolCall struct {
	ToolUseID string `json:"tool_use_id"`
	// ToolUseIDDerived says the agent gave no id (Gemini CLI): opx
	// derived one from the session, tool and input.
	ToolUseIDDerived bool   `json:"tool_use_id_derived,omitempty"`
	AgentTool        string `json:"agent_tool"`
	Input            string `json:"input,omitempty"`
	InputBlob        string `json:"input_blob,omitempty"`
	InputSize        int64  `json:"input_size"`
	// Kind is what the call does (shell, read, write, web, mcp, ...,
	// unknown); Unknown says what opx could not understand.
	Kind    string   `json:"kind"`
	Calls   int      `json:"calls"`
	Unknown []string `json:"unknown,omitempty"`
	TurnID  string   `json:"turn_id,omitempty"`
	Model   string   `json:"model,omitempty"`
	// Sandboxed says the agent was told to run the command inside opx's
	// command sandbox (hooks.sandbox_commands: its input rewritten to
	// the sandbox's launcher with the same command; Shield judged the
	// command as the agent wrote it).
	Sandboxed bool `json:"sandboxed,omitempty"`
}

func (*HookToolCall) Type() string { return TypeHookToolCall }

func (h *HookToolCall) Validate() error {
	if h.Calls < 1 || h.Calls > 256 {
		return errors.New("calls must be 1 to 256")
	}
	return firstErr(need("tool_use_id", h.ToolUseID, "agent_tool", h.AgentTool, "kind", h.Kind), inlineOrBlob(h.Input, h.InputBlob, h.InputSize))
}

// HookEvent records a session event of the agent that is not a tool call
// (its prompt is a client.message): the end of a turn with the model's
// last message, the session's end (Name SessionEnd, Kind session-end),
// a post-tool event for a call opx has no open record of, or any other
// event the agent's hooks send.
type HookEvent struct {
	Name string `json:"name"` // hook_event_name as the agent sent it
	Kind string `json:"kind"` // agents/hookproto.Kind
	// Text is what the event carries: the model's last message (stop),
	// the tool's response (an orphan post-tool event); a blob past
	// InlineLimit.
	Text     string `json:"text,omitempty"`
	TextBlob string `json:"text_blob,omitempty"`
	Size     int64  `json:"size"`
	Reason   string `json:"reason,omitempty"`
	// ToolUseID and AgentTool name the call of a post-tool event.
	ToolUseID string `json:"tool_use_id,omitempty"`
	AgentTool string `json:"agent_tool,omitempty"`
	Detail    string `json:"detail,omitempty"` // what opx made of it
}

func (*HookEvent) Type() string { return TypeHookEvent }

func (h *HookEvent) Validate() error {
	return firstErr(need("name", h.Name, "kind", h.Kind), inlineOrBlob(h.Text, h.TextBlob, h.Size))
}

// HookTranscript references the agent's transcript file of the session,
// stored as a blob (the agent's own record of what its model was told and
// answered: its model calls do not pass through opx).
type HookTranscript struct {
	Path string `json:"path"`
	Blob string `json:"blob"`
	// Size is the file's size when it was read; Stored what the blob
	// holds (its first bytes when Truncated).
	Size      int64 `json:"size"`
	Stored    int64 `json:"stored"`
	Truncated bool  `json:"truncated,omitempty"`
}

func (*HookTranscript) Type() string { return TypeHookTranscript }

func (h *HookTranscript) Validate() error {
	if h.Stored < 0 || h.Size < 0 || (!h.Truncated && h.Stored != h.Size) {
		return errors.New("stored must equal size unless truncated")
	}
	return firstErr(need("path", h.Path), needBlob("blob", h.Blob, false))
}

// HookUnrecorded records, at an engine's start, the hook events answered
// while no engine ran (hooks.on_engine_down: allow): the calls let
// through unjudged and unrecorded, as the hook wrote them down.
type HookUnrecorded struct {
	Agent          string `json:"agent"`
	AgentSessionID string `json:"agent_session_id,omitempty"`
	Name           string `json:"name"`
	AgentTool      string `json:"agent_tool,omitempty"`
	Input          string `json:"input,omitempty"` // the tool input, cut to 4 KiB
	Cwd            string `json:"cwd,omitempty"`
	At             string `json:"at"` // RFC 3339, when the hook answered
	Decision       string `json:"decision"`
	Reason         string `json:"reason"`
}

func (*HookUnrecorded) Type() string { return TypeHookUnrecorded }

func (h *HookUnrecorded) Validate() error {
	return firstErr(oneOf("agent", h.Agent, hookAgents...), need("name", h.Name, "at", h.At, "decision", h.Decision, "reason", h.Reason))
}
