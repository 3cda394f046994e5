// Package judge is the engine's side of Shield: it turns a tool call
// (Proposal) into the facts Shield judges (shield.Action) and hands the
// verdicts back to the pipeline.
//
// # What it owns
//
//   - Proposal, Verdict and Evaluator: what the pipeline asks and is
//     answered (the engine names them through aliases).
//   - ShieldEvaluator: a tool's arguments as facts (shield_evaluator.go),
//     an MCP server's tool's arguments read generically (shield_mcp.go),
//     and the symlinks a proposal's paths go through, resolved in the
//     workspace before the proposal is recorded (shield_links.go).
//
// Tier 2 (a model, recorded in the ledger) and tier 3 (a human) answer
// escalations in the engine, which records their exchanges; combining
// verdicts (engine.Decide) is the pipeline's.
//
// # Imports
//
// judge may import shield, ledger and the engine's leaf packages it reads
// tool calls with (engine/executor for tool definitions, caps and the
// workspace; engine/mcp for tool names), never the engine itself: the
// engine imports judge.
package judge
