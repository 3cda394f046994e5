// Package hookrun is the client side of a coding agent's hook: one run of
// `opx hook AGENT` or of the small `opx-hook AGENT` binary. It reads the
// event the CLI (Claude Code, Codex CLI, Gemini CLI) writes on stdin,
// finds the workspace, attaches its engine (starting one with the full
// opx if none runs), has the engine decide or record the event
// (HookService.Event), sends the transcript when asked, and answers in
// the CLI's format. The engine's side is engine/hooks.
//
// It may import agents/hookproto, agents/unrecorded, engine/config,
// engine/registry, ledger (for the state directory), proto/opx/v1, grpc,
// cli/internal/daemon, the small internal/ packages and the standard
// library: never package cli, urfave/cli, Shield, the MCP SDK or the
// engine's core. A hook runs twice per tool call, and starting the whole
// opx (its 227 packages' initialisation) costs more than the rest of the
// round trip; TestImports_Light keeps it light.
//
// # Invariants
//
//   - Fail closed: before a tool call, anything that keeps opx from
//     deciding (an event it cannot read, no workspace, no engine, no
//     answer within hooks.decision_timeout, a panic) denies the call in
//     the CLI's format, with the reason; hooks.on_engine_down: allow
//     allows a call no engine can take and writes it down
//     (agents/unrecorded). Other events are never denied.
//   - stdout is the CLI's: only the answer is written there. What opx
//     says besides is held back until the answer and written to stderr
//     unless the answer is an exit-2 denial, whose stderr is the reason
//     the model reads.
//   - Everything, an engine's start included, happens within
//     hooks.decision_timeout.
package hookrun
