// Package tier2 is Shield's tier 2: a model asked whether an action a rule
// escalated is safe (LLMEvaluator), its exchanges recorded in the
// proposal's session the way the gateway records the agent's.
//
// # What it owns
//
//   - LLMEvaluator: the prompt, the strict answer format, the verdict
//     (rules tier2:llm-evaluator, tier2:error, tier2:malformed,
//     tier2:budget), and the daily budget counted from the ledger.
//
// # Imports
//
// tier2 imports ledger and its events, engine/llm (the model) and
// engine/judge (Proposal, Verdict, the path arguments), never the engine:
// the engine builds the evaluator (engine.New, and replay mode on the
// recorded model) and answers escalations with it through its own
// engine.Tier2 interface, so tier2 sits below the core. It records
// through Recorder, which the engine's recorder satisfies.
//
// # Invariants
//
//   - Fail-closed: a failed call, or an answer that is not exactly
//     {"decision":"allow"|"block","reason":"..."}, blocks.
//   - The request is recorded before the call, so the budget counts it
//     even when the engine dies during the call; a restart does not
//     refill the budget.
package tier2
