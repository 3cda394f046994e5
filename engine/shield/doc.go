// Package shield judges what the agent proposes before anything runs.
//
// # Tiers
//
// Every proposal goes through the tiers in order, and every tier consulted
// gives a verdict the engine records:
//
//   - Tier -1, hard-coded protection: the ledger, the state directory and
//     the engine's keys are never reachable by a tool; .opx/config.yaml is
//     read-only. No policy can change this.
//   - Tier 0, the policy (YAML): deny rules, then verify rules, then allow
//     rules; the first list with a matching rule decides, and a policy
//     default covers the rest.
//   - Tier 1, built-in heuristics with named rules: credential paths,
//     exfiltration shapes, destructive commands, writes that run later
//     outside any sandbox, prompt-injection markers. A tier 1 block
//     overrides a tier 0 allow; the policy can trust a host, not silence
//     a rule.
//   - Tiers 2 and 3 answer escalations, and live in the engine, which
//     records their exchanges: tier 2 asks a model, tier 3 a human. An
//     escalation's Tier names who must answer; a tier 2 escalation with no
//     evaluator configured goes to a human.
//
// # Invariants
//
//   - Deny wins: any block among the verdicts blocks the action; an
//     escalation stands until someone (tier 2 or 3) answers it.
//   - Evaluation is a pure function of the action, the policy and the
//     rate-limit window, so a recorded verdict can be re-derived from the
//     recorded action and the policy with the recorded hash.
//   - Paths are judged as the executors will resolve them: relative to the
//     workspace, cleaned, "~" as the user's home; a path that climbs out of
//     the workspace is judged as the outside path it names.
package shield
