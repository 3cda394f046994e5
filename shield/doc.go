// Package shield judges what the agent proposes before anything runs.
//
// # Tiers
//
// Every proposal goes through the tiers in order, and every tier consulted
// gives a verdict the engine records:
//
//   - Tier -1, hard-coded protection: the ledger, the state directory and
//     the engine's keys are never reachable by a tool, not even by a glob
//     or a recursive read that could reach them; .opx/ and the policy file
//     are neither read nor written by tools. No policy can change this.
//   - Tier 0, the policy (YAML): deny rules, then verify rules, then allow
//     rules; the first list with a matching rule decides, and a policy
//     default covers the rest. Command rules match each program a line
//     runs; a line is allowed only when every program in it is.
//   - Tier 1, built-in rules with stable names (rules*.go, listed in
//     docs/shield-rules.md): credentials, destructive acts, exfiltration,
//     writes that run later outside any sandbox, scripts judged by what
//     they would run, code written in any language that will send data
//     to a destination the file did not name or run code it fetches,
//     memory that instructs, prompt injection, encoded
//     payloads, what cannot be understood. A tier 1 block overrides a
//     tier 0 allow; the policy can trust a host, not silence a rule. Tier
//     1 may also escalate what is suspicious but plausibly benign. What
//     no rule spoke about, if it is an edit, is scored by the learned
//     scorer (shield/score, learned.go): it may escalate (to tier 2),
//     never allow or block.
//   - Tiers 2 and 3 answer escalations, and live in the engine, which
//     records their exchanges: tier 2 asks a model, tier 3 a human. An
//     escalation's Tier names who must answer; a tier 2 escalation with no
//     evaluator configured goes to a human.
//
// # Facts
//
// The tiers judge Facts: the paths an action reads, writes and deletes,
// the requests it makes, the programs it runs, the text it carries, the
// code it runs that it does not hold, and what cannot be known. A tool's
// are derived from its arguments (engine/judge.ShieldEvaluator); a command
// line's from parsing it (CommandFacts); Evaluate merges them. Globs are
// judged as patterns: one that could match a protected or credential
// path is treated as naming it.
//
// # Invariants
//
//   - Deny wins: any block among the verdicts blocks the action; an
//     escalation stands until someone (tier 2 or 3) answers it.
//   - Evaluation is a pure function of the action, the policy, the
//     configuration (workspace, home, protected and read-only paths) and
//     the rate-limit window: no filesystem, no environment, no clock
//     beyond the rate limit's. So a recorded verdict can be re-derived
//     from the recorded action and the policy with the recorded hash.
//   - What cannot be understood escalates, never allows.
//   - Every input is judged in bounded time: patterns are compiled in New
//     and ParsePolicy, glob overlap has a step budget, texts are clipped.
//   - Paths are judged as the executors will resolve them: relative to the
//     workspace, cleaned, "~" as the user's home; a path that climbs out of
//     the workspace is judged as the outside path it names.
//   - A path that went through a symlink when the action was proposed is
//     judged where it led too (a Ref with Via; Action.Links for a command
//     line): the resolution is made by the engine before the verdict and
//     recorded with the proposal, so judging stays free of the filesystem
//     and a replay judges what was judged.
//
// # Imports
//
// Shield is a top-level room: it imports only ledger (the policy hash) and
// its own shellx, never the engine. The engine reaches it through
// engine/judge.ShieldEvaluator, which turns a tool call into the Action judged
// here; the tiers that need the engine's recorder (2, a model, and 3, a
// human) live there.
package shield
