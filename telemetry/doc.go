// Package telemetry maps opx ledger entries to OpenTelemetry spans and span
// events (the GenAI and MCP semantic conventions) and sends them to an
// OTLP endpoint with the OpenTelemetry Go SDK. The same Mapper serves the
// engine's live exporter (Live, which reads entries only once they are
// durable, in the background) and `opx ledger export --format otlp`
// (Export), so a session exported live and again later gives the same
// trace.
//
// # Mapping
//
//   - A turn (client.message, or engine.process_request without one, up to
//     agent.response_complete or agent.error) is an invoke_agent span, the
//     root of its own trace unless the client passed a W3C traceparent
//     (recorded in client.message), which becomes its parent.
//   - A model call (llm.request .. llm.response) is a chat span under its
//     turn; a tool call (tool.proposed .. engine.tool_result) an
//     execute_tool span, or for a tool of an MCP server (mcp__server__tool)
//     a "tools/call {tool}" span with the MCP attributes. An mcp-proxy
//     session's mcp.request .. mcp.response is a "{method} {tool}" span.
//   - A sub-agent (subagent.spawned .. its end) is an invoke_agent span
//     under the call that spawned it; its turns are under it.
//   - Shield's verdicts are span events (opx.shield.verdict: what Shield
//     JUDGED: decision, tier, rule, reason, policy hash); what was ENFORCED
//     (allowed and ran, blocked, denied) is the tool span's
//     opx.enforced attribute. Approvals, snapshots, executions, flagged
//     results and rollbacks are events too.
//
// # Invariants
//
//   - Every span and every event carries opx.ledger.id, opx.ledger.seq and
//     opx.ledger.hash of the entry it comes from (a span: the entry that
//     opened it), so `opx ledger prove SEQ` checks it.
//   - Trace and span ids are a pure function of the ledger id, the session
//     and the seq of the opening entry (BLAKE3): exporting again gives the
//     same ids, and the live exporter and an export agree.
//   - Timestamps are the entries' own.
//   - Content (arguments, results, messages, model text) is attached only
//     with Options.Content, never for an off-the-record session nor for a
//     value the ledger holds withheld; every string attribute is cut to a
//     bound and stripped of control characters, so a hostile recorded
//     value cannot bloat a span or forge a log line.
//   - State is bounded: at most MaxOpen spans are held open; past that a
//     new span is ended at once (marked opx.truncated) and counted.
//   - Live never blocks the engine: it reads durable entries from the
//     ledger at its own pace (the ledger is its queue), the SDK's queue is
//     bounded, and a slow or down collector only makes it lag and count
//     failures (Status).
package telemetry
