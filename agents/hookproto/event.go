package hookproto

import (
	"encoding/json"
	"time"
)

// Bounds on what Decode accepts.
const (
	// MaxEventBytes is the most Decode reads of one event. The largest
	// honest events carry a file's content (Claude's Write, Gemini's
	// write_file) or a tool's output; 16 MiB is far above what the CLIs
	// let a tool return to the model.
	MaxEventBytes = 16 << 20
	// MaxToolResponse is the most of a tool response kept verbatim.
	MaxToolResponse = 4 << 20
	// MaxDepth bounds the nesting of the event's JSON.
	MaxDepth = 128
	// MaxIDBytes bounds a session, tool-use, turn or prompt id.
	MaxIDBytes = 128
	// MaxPathBytes bounds cwd, the project directory and the transcript
	// path (Linux's PATH_MAX).
	MaxPathBytes = 4096
	// MaxNameBytes bounds the short text fields: event name, tool name,
	// model, permission mode, source, reason.
	MaxNameBytes = 256
)

// Event is one hook event of any of the three CLIs. Fields a CLI does not
// send for that event are zero.
type Event struct {
	Agent Agent `json:"agent"`
	Kind  Kind  `json:"kind"`
	// Name is hook_event_name as the CLI sent it ("PreToolUse",
	// "BeforeTool", or any name KindOther stands for).
	Name string `json:"name"`

	SessionID string `json:"session_id"`
	// Cwd is the agent's working directory: absolute and clean.
	Cwd string `json:"cwd"`
	// ProjectDir is the CLI's project directory from its environment
	// (ProjectDirEnv), absolute and clean; empty where the CLI sets none.
	ProjectDir     string `json:"project_dir,omitempty"`
	TranscriptPath string `json:"transcript_path,omitempty"`
	Model          string `json:"model,omitempty"`
	PermissionMode string `json:"permission_mode,omitempty"`
	TurnID         string `json:"turn_id,omitempty"`
	PromptID       string `json:"prompt_id,omitempty"`
	// Source is why a session started (startup, resume, clear, ...).
	Source string `json:"source,omitempty"`
	// Reason is why a session ended.
	Reason string `json:"reason,omitempty"`
	// Prompt is the user's prompt (prompt events; Gemini's AfterAgent
	// repeats it).
	Prompt string `json:"prompt,omitempty"`
	// Response is the model's last message at a stop event.
	Response string `json:"response,omitempty"`
	// Timestamp is when the CLI says the event happened (Gemini only).
	Timestamp time.Time `json:"timestamp,omitzero"`

	// Tool is the agent's own tool name (pre- and post-tool events).
	Tool string `json:"tool,omitempty"`
	// ToolInput is the tool's input, verbatim as sent: a JSON object.
	ToolInput json.RawMessage `json:"tool_input,omitempty"`
	// ToolUseID names the call; the pre- and post-tool events of one call
	// carry the same. For Gemini it is derived (ToolUseIDDerived; see the
	// package documentation).
	ToolUseID        string `json:"tool_use_id,omitempty"`
	ToolUseIDDerived bool   `json:"tool_use_id_derived,omitempty"`

	// ToolResponse is the tool's result (post-tool events), verbatim when
	// it is at most MaxToolResponse bytes. Past that it is nil,
	// ToolResponseTruncated is set and ToolResponseText holds a valid
	// UTF-8 prefix of its bytes.
	ToolResponse          json.RawMessage `json:"tool_response,omitempty"`
	ToolResponseText      string          `json:"tool_response_text,omitempty"`
	ToolResponseTruncated bool            `json:"tool_response_truncated,omitempty"`
	// ToolResponseBytes is the size of the tool response as sent.
	ToolResponseBytes int `json:"tool_response_bytes,omitempty"`
	// Failed reports a tool that failed (Claude's PostToolUseFailure, a
	// response with an error); Error says how, where the CLI says.
	Failed bool   `json:"failed,omitempty"`
	Error  string `json:"error,omitempty"`
	// Interrupted reports a tool the CLI says was interrupted.
	Interrupted bool `json:"interrupted,omitempty"`
	// Duration is the tool's run time where the CLI gives it (Claude's
	// duration_ms); HasDuration tells zero from absent.
	Duration    time.Duration `json:"duration,omitempty"`
	HasDuration bool          `json:"has_duration,omitempty"`

	// Ignored lists the known fields whose value was of an unexpected
	// type and so was left out (a newer CLI may change them; the event is
	// still judged by the fields that identify it).
	Ignored []string `json:"ignored,omitempty"`
	// Raw is the event as read.
	Raw json.RawMessage `json:"-"`
}
