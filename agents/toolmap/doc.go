// Package toolmap is the one mapping from a coding agent's tool call
// (Claude Code, Codex CLI, Gemini CLI, and any agent's MCP tools) to what
// it does in opx's vocabulary, shared by the hooks (`opx hook`), Shield's
// judging of them and the MCP judging.
//
// Map returns a Mapping: the opx tool calls the agent's call amounts to
// (Calls: opx's own tool names with canonical JSON arguments the engine's
// pipeline takes, so Shield judges each exactly like the same call of
// opx's agent), the paths it reads, writes and deletes, whether it
// mutates and whether its effect is workspace-wide, with the agent's own
// tool name and input kept verbatim beside. Most calls are one opx call;
// a patch, a multi-edit or a fetch of several URLs is several, judged one
// by one (any block blocks).
//
// It is pure: no filesystem, no network, no engine. It imports
// agents/hookproto (the agents' names) and ledger (canonical JSON).
//
// # Invariants
//
//   - Fail closed: a tool not known here, an input that does not decode,
//     a malformed patch or a call over the bounds (MaxCalls) maps to a
//     mutating, workspace-wide Mapping whose Unknown says why; the caller
//     must judge it as what cannot be understood (an escalation) and
//     snapshot the whole workspace before it runs.
//   - Shell commands are workspace-wide: what a command line changes is
//     not known before it runs.
//   - MCP tools are mutating and workspace-wide: a server may change
//     anything (its own annotations are claims, not facts).
//   - Paths: an absolute path inside the workspace becomes relative to
//     it ("." for the workspace itself); a relative one is taken from the
//     agent's working directory, then made relative the same way; a path
//     outside the workspace stays absolute, and "~" paths stay as
//     written, for Shield to judge. Paths are cleaned lexically; where
//     symlinks lead is the engine's to resolve.
//   - Map never panics and does a bounded amount of work for any input.
package toolmap
