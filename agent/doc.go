// Package agent is opx's sandboxed reasoning loop: a gRPC client of the
// engine that turns a user message into model calls and tool proposals and
// reports the answer.
//
// # Invariants
//
//   - The agent reads nothing itself: the user message, the history and
//     the tools come in a ProcessRequest, model answers come from the
//     engine's LLM gateway, and tool results come back as directives. It
//     needs no filesystem and no network beyond the engine's port, which is
//     what lets the sandbox deny everything else.
//   - It only proposes: every tool call goes to the engine, which judges,
//     executes and records it.
//   - It is deterministic: given the same directives and the same gateway
//     chunks it sends byte-identical events and requests (no clock, no
//     randomness, no map order), because replay re-runs it and compares.
//   - One stream: events are sent by one goroutine at a time, and process
//     requests are answered one at a time, in order.
package agent
