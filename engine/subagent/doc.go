// Package subagent is the engine's sub-agents (issue 15;
// docs/subagents.md): the agent tools a session's agent spawns and steers
// them with (spawn_agent, list_agents, agent_status, agent_result,
// agent_message, cancel_agent), the SubAgentService stream each sandboxed
// sub-agent process talks, the model calls it makes through the gateway,
// and the pipeline's hooks that hold each one to the tools it was granted
// and stop what it runs when it ends.
//
// # What it owns
//
//   - Manager, one engine's set of sub-agents: it implements
//     engine.SubAgents, and each sub-agent engine.SubAgent. Linked in, the
//     package registers Manager with engine.UseSubAgents; an engine built
//     without it has no sub-agents and refuses `agents.enabled`.
//   - The sub-agent's gRPC service (subagents_service.go): an adapter over
//     Manager that moves with it.
//
// The core keeps what must hold whether or not this package is linked:
// the configuration (engine.AgentsConfig), the agent tools' group name,
// and the recovery that ends the sub-agents of a crashed engine
// (subagent.failed engine_crashed, engine/subagents.go).
//
// # Imports
//
// subagent imports the engine (the core), the LLM gateway
// (engine/gateway, which makes its admitted model calls) and leaf
// packages (executor, ledger, event, the protocol); the engine never
// imports it.
//
// # Invariants
//
//   - The end entry is recorded under the sub-agent's gate, which Admit
//     holds from its check until exec.started is durable: nothing of a
//     sub-agent starts executing after its end entry.
//   - A sub-agent's token opens RunSubAgent once, for it alone, and the
//     gateway only for its own message in flight; it dies with the end.
//   - The engine enforces the limits (concurrency, rounds, wall clock):
//     an agent is never trusted to stop itself.
package subagent
