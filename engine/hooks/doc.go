// Package hooks is the engine's side of `opx hook AGENT` (docs/agents.md):
// the sessions of the coding agents opx audits through their hooks
// (Claude Code, Codex CLI, Gemini CLI). The hook process (cli) reads the
// event the CLI wrote on its stdin and sends it, as written, in one
// HookService.Event call; this package parses it again (agents/hookproto:
// the engine never takes the hook's word), records it and answers.
//
// # What it owns
//
//   - The sessions (sessions.go): one opx session per agent session, of
//     mode claude-code, codex or gemini-cli, its id derived from the
//     agent's session id; session.created and hook.session once, the
//     user's prompts as client.message, a turn's end and the session's
//     end as hook.event. Linked in, the package registers them with
//     engine.UseHooks; an engine built without it serves no HookService
//     and every hook fails closed.
//   - The tool calls (calls.go): a pre-tool event is mapped to opx's
//     vocabulary (agents/toolmap), recorded with the agent's own tool and
//     input (hook.tool_call), and taken through the pipeline as calls the
//     agent runs itself (engine.Pipeline.HandleExternal): judged, and when
//     allowed snapshotted and started, durably, before the hook answers
//     allow. The post-tool event's result completes the call
//     (exec.completed with what changed, measured from disk).
//   - Calls whose end never comes (recover.go): closed as interrupted at
//     the session's end, after hooks.tool_timeout, at the engine's stop,
//     or, after a crash, at the next engine's start; and the calls hooks
//     let through while no engine ran (hooks.on_engine_down: allow),
//     recorded at the next start as hook.unrecorded.
//   - Transcripts (service.go): the agent's transcript file, sent by the
//     hook at the session's end, stored as a blob (hook.transcript).
//
// # Imports
//
// hooks imports the engine (the core), agents/hookproto and
// agents/toolmap, ledger and the protocol; the engine never imports it.
//
// # Invariants
//
//   - Fail closed: nothing is allowed that was not judged, and a call
//     that may change the workspace is allowed only once its snapshot
//     and exec.started are durable. An event that does not parse, names
//     a directory outside the workspace, or arrives while the engine
//     stops is refused (the hook then denies).
//   - Every allowed call ends exactly once in the ledger: with the
//     agent's report, or as interrupted.
//   - Bounded: open sessions (MaxSessions), calls open per session
//     (MaxOpenCalls), text kept inline or as blobs (event.Inline),
//     transcripts (MaxTranscript).
package hooks
