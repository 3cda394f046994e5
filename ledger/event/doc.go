// Package event names every entry type of the opx ledger and gives each one
// a typed payload, so the engine writes, and review tools read, the same
// fields under the same names.
//
// # Invariants
//
//   - Every type of the DESIGN taxonomy has a constant here and a payload
//     struct whose Type method returns it; Types lists them all.
//   - Payload fields are snake_case and hold no floats (the ledger holds
//     integers only): durations are integer milliseconds, sizes bytes.
//   - Large or binary content is never inlined: payloads name it with a
//     "blob" or "<x>_blob" member holding its 64-hex BLAKE3, which the ledger
//     stores in the same transaction (see Record).
//   - Secrets are never recorded: agent.ready says whether the agent's token
//     was valid, never the token.
//   - Every payload about a tool call carries call_id; shield.verdict carries
//     decision, tier and rule; approval.resolved carries call_id and
//     approved; chronicle.snapshot carries call_id and files; exec.* carry
//     call_id and tool. These names are normative: review tools read them.
//
// # Checking
//
// Check decodes a payload strictly (unknown members and wrong types are
// errors) and validates it; it is what `opx ledger verify --strict` runs on
// every entry. Most payloads are read by a fast path that fills the
// typed struct from one scan of the bytes (check_fast.go); whatever it is
// not sure of, and every payload that does not validate, goes through
// encoding/json, so the verdict and the error are always encoding/json's
// (TestFastDecode_MatchesReference, FuzzFastCheck).
//
// Causality checks, in seq order, that nothing was executed without its
// proposal, an allowing verdict (or approval) and, for a mutating tool, a
// snapshot first, that no blocked call ran, and that the
// verdicts and the execution are about the action that was proposed (same
// action hash). For sub-agents it checks that each was spawned by an
// allowed call of the session's own agent before anything of it was
// recorded, ended exactly once, proposed, executed and called a model only
// before its end, executed only the tools it was granted, and had ended
// before an engine started or stopped (causality_subagent.go).
package event
