// Package gateway is the LLM gateway: the agents' only way to a model.
// It serves LLMGateway.Complete for the session agent and hands a live
// sub-agent's calls to it (engine.SubAgent.Complete), which admits them
// and comes back through Complete.
//
// It may import the engine's core (package engine, through the small
// Engine interface *engine.Engine satisfies), engine/agentwire,
// engine/llm, ledger and the generated proto; the core never imports it:
// engine/grpcapi registers its service on every engine's server, and
// engine/subagent calls Complete.
//
// # Invariants
//
//   - A model call is served only for a message in flight in the session
//     it names, and only to the token of the agent or of a live
//     sub-agent: a token that is no one's any more is refused.
//   - The exact request body is recorded (llm.request, with its blob)
//     before the call, and the raw response (llm.response) after it, even
//     when the agent went away meanwhile; nothing of a sub-agent's call
//     starts after its end entry.
package gateway
