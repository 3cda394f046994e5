// Package engine is opx's privileged process: the only ledger writer at run
// time, the gRPC server the sandboxed agent and the clients talk to, and
// the tool pipeline that judges, snapshots and executes what
// the agent proposes.
//
// # Files
//
// engine.go (New, Run, the server), options.go (what it is given; the
// fleet's shipper and the witnesses it runs beside it are
// engine/outward's, the MCP servers' glue engine/mcp's), agent.go
// (the agent's process and stream), message.go (a client's message: its
// session, its delivery to the agent, the events streamed back; status
// and stop), pipeline*.go, approvals.go, recorder.go (and tier 2's
// recording), session.go (start, sessions, checkpoints), auth.go (the
// record of refused calls, and answers only of what is durable; the one
// way in is engine/auth, below the core); rooms.go holds the interfaces
// through which the core reaches the rooms above it (services, mcp-proxy
// and hook sessions, sub-agents, the rerun driver), accessors.go what
// they borrow. The gRPC services other than the agent's are adapters
// above the core (engine/grpcapi, engine/gateway, engine/subagent,
// engine/mcpproxy, engine/hooks); the events streamed to clients are
// held until durable by engine/broadcast, below it.
// The helpers it shares with them live below it: engine/agentwire (the
// agent protocol as entries), sandbox (the canary's targets), engine/llm
// (the provider a configuration names).
//
// # Invariants
//
//   - Everything the engine learns or decides is recorded through the
//     Recorder, in the order it happened: every AgentEvent received, every
//     EngineDirective sent, every model exchange, verdict and execution.
//   - Write-ahead: a tool's proposal and verdicts are durable (the Sync
//     exec.started fsyncs them) before its executor runs, and its result is
//     durable before the result is delivered. A rollback's plan (every
//     path and the state it will write) is durable before its first path
//     changes; at start, before engine.started, the engine records how any
//     interrupted rollback left the workspace (undo.RecoverRollbacks).
//   - A ledger failure stops the engine: nothing runs that could not be
//     recorded.
//   - What runs is exactly what was judged: the action hash over the tool
//     and its canonical arguments is re-checked before execution.
//   - One way in: every RPC on the engine's port passes one authenticator
//     (engine/auth) whose table names the credential each service requires
//     (the client token, the agent's token, a live sub-agent's token); a
//     service missing from the table is refused to every caller.
//   - Sub-agents (engine/subagent, docs/subagents.md) are sandboxed processes
//     like the agent, each with its own single-use token and the tools
//     granted at spawn; their entries are in the parent's session with
//     their subagent_id, exactly one entry ends each, and nothing of a
//     sub-agent is proposed, model-called or executed after it. The
//     engine enforces their limits (concurrency, rounds, wall clock).
//   - An `opx mcp-proxy` session (engine/mcpproxy, docs/mcp-proxy.md) is one
//     McpProxyService stream: its upstream MCP server is started for it
//     alone and ended with it, its client's tool calls go through the
//     same pipeline (Pipeline.SessionTools holds the upstream's tools),
//     and its end is recorded before engine.stopped.
//   - Clients hear only of durable entries: the Broadcaster
//     (engine/broadcast) releases an event once the ledger's durable
//     watermark passes every entry appended before it, a unary answer
//     leaves once what was appended before it is durable (durableAnswer),
//     and the ledger service and GetStatus stop at the durable head, so no
//     seq, session id or message id reaches a client before its entry
//     could survive a crash.
package engine
