// Package hookproto is the wire protocol of the command hooks that Claude
// Code, Codex CLI and Gemini CLI run before and after each tool call and at
// their session-level events: it decodes the one JSON event a CLI writes
// on the hook's stdin into an Event common to the three (Decode), and
// encodes opx's answer in the format, exit status and streams that CLI
// obeys (Encode, Refuse). `opx hook AGENT` is built on it; what the event
// asks for is mapped to opx's vocabulary by agents/toolmap.
//
// It is pure: no filesystem, no network, no clock, no environment (the
// caller passes the variables the CLIs set). It imports only the standard
// library.
//
// # Events
//
// Each CLI's event names map to a Kind (session-start, prompt, pre-tool,
// post-tool, stop, session-end); a name this package does not know is
// KindOther with the name kept, never an error. The fields each pinned
// CLI sends are tabled in internal/agenttest/doc.go.
//
// # Hostile input
//
// Stdin is whatever a process wrote, so:
//
//   - At most MaxEventBytes are read; a longer input is refused
//     (ErrTooLarge) after reading MaxEventBytes+1 bytes.
//   - The input must be one JSON object, valid UTF-8, nested at most
//     MaxDepth deep, with no duplicate member names at any depth
//     (ErrMalformed): the CLIs' JSON encoders never write one, and two
//     readers that keep different duplicates would judge different calls.
//   - Identifiers (session_id, tool_use_id, turn_id, prompt_id) become
//     names in the ledger, so they are refused, not rewritten, unless
//     they are 1..MaxIDBytes bytes of [A-Za-z0-9._:-] (ErrBadID); the
//     three CLIs send UUIDs. A session id is required on every event.
//   - Paths (cwd, the project directory, the transcript path) must be
//     absolute, clean (path.Clean leaves them unchanged), at most
//     MaxPathBytes and free of control characters (ErrBadPath); cwd is
//     required. A path is refused rather than cleaned, because ".."
//     taken lexically and ".." taken by the kernel part at symlinks.
//   - Short texts (event name, tool name, model, permission mode, source,
//     reason) are at most MaxNameBytes with no control characters
//     (ErrBadField).
//   - The tool response is kept verbatim up to MaxToolResponse bytes;
//     past it only a valid UTF-8 prefix of its text is kept
//     (ToolResponseTruncated).
//
// # Gemini's tool-use id
//
// Gemini CLI sends no id for a tool call. Decode derives one that is the
// same for the BeforeTool and AfterTool events of a call: "gemini-" and
// the first 32 hex digits of the SHA-256 of the session id, tool name and
// tool input (compacted) joined by NUL bytes. It names the call's content,
// not its instance: two identical calls in one session share it, and the
// consumer pairs them first in, first out (Gemini runs a session's tools
// one after another unless the model asks for several at once).
//
// # Answers
//
//	              Claude Code              Codex CLI                      Gemini CLI
//	allow         exit 0, no output (the CLI's own permissions then apply)
//	deny          exit 2, reason on stderr exit 2, reason on stderr       exit 0, {"decision":"deny","reason":R}
//	ask           {"hookSpecificOutput":   not supported (ErrUnsupported) exit 0, {"decision":"ask","systemMessage":R}
//	               {..."permissionDecision":"ask",...}}
//	rewrite input {... "permissionDecision":  {... "permissionDecision":"allow", exit 0, {"hookSpecificOutput":
//	               "allow","updatedInput":I}} "updatedInput":{"command":...}}  {"tool_input":I}} (merged over
//	                                                                           the input by the CLI)
//
// Only a pre-tool event can be denied, asked or rewritten; other events
// take allow. Refuse answers an event that could not be decoded: exit 2
// with the reason on stderr, which all three CLIs take as a denial of a
// tool call (fail closed) and show for other events.
package hookproto
