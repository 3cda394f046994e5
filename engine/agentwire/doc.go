// Package agentwire is the agent protocol as the engine records it: an
// agent's or sub-agent's events read (bounded waits, the canary decoded)
// and turned into the entries that record them, the tool definitions as
// the protocol sends them, and a model exchange as its llm.response.
// The engine's agent service, its LLM gateway, tier 2 (through the
// Recorder) and engine/subagent share it, so the agent and its
// sub-agents are recorded alike.
//
// # Invariants
//
//   - What an agent sends is bounded before it is recorded (ids, codes
//     and messages clipped on a character boundary), and a canary the
//     engine cannot vouch for counts as unsandboxed.
//   - It imports nothing of the engine but its executor's tool
//     definitions and the LLM providers' exchanges: below the core.
package agentwire
