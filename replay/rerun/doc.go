// Package rerun is the record side of `opx replay SESSION --rerun`: it
// reads a recorded session out of a ledger (Load), with everything an
// engine in replay mode needs to re-drive it (the engine configuration in
// force, the client messages, the raw model request and response bodies,
// each proposal's verdicts, snapshot and result, the approvals' answers),
// and it compares the entries a rerun produced with the recorded ones
// (Compare), reporting the first divergence as a unified diff.
//
// The engine's replay mode (engine/replay*.go) does the re-driving; this
// package knows nothing of engines, so a comparison can be tested, and a
// record read, on its own.
//
// # What is compared
//
// The entries whose session is the rerun session, in seq order, each by
// type and payload (data). Entries outside the session (engine and agent
// lifecycle, tool definitions, rollbacks, prunes) cannot be attributed to
// it and are not compared; what they carry that matters reaches the
// session anyway (the tools loaded show in the next llm.request body,
// which is compared byte for byte through its blob hash). Two types are
// left out because they are not events of the run: ledger.note (an
// investigator's annotation, added later) and ledger.checkpoint (the
// ledger's projection state roots).
//
// Everything else in a payload is compared, including blob hashes (so a
// model request or response body, a tool result or a snapshot's content
// must be byte-identical), verdict reasons, results and exit codes.
//
// A rerun never reads a workspace, so what Chronicle and the executors
// recorded (chronicle.snapshot, exec.completed's result, exit code and
// pre/post states, exec.failed) is recorded again from the record; the
// comparison then shows that the rerun reached the snapshot and the
// execution at the same point for the same call, not that the workspace
// would give the same result. Everything else in the session is produced
// afresh: the model calls' request bodies and parsed answers, the tokens,
// the proposals, Shield's verdicts, the escalations and the answers the
// agent gets.
//
// # Volatile fields
//
// Exactly these differ legitimately between two runs and are ignored:
//
//   - The entry envelope's ts, seq and prev (only type and data are
//     compared; order is compared by position).
//   - llm.response latency_ms, exec.completed duration_ms and
//     exec.failed duration_ms: wall-clock measurements.
//   - Members a payload gained after a ledger was recorded, when the
//     recorded entry lacks them: approval.requested message_id and
//     arguments (recorded since 2026-11-23).
//   - agent.tokens coalescing: the engine coalesces streamed tokens into
//     entries as they arrive, and the gateway records llm.response while
//     the agent is still forwarding the same call's tokens, so how a
//     call's text is split across agent.tokens entries, and where its
//     llm.response falls among them, depend on scheduling. Each maximal
//     run of agent.tokens and llm.response entries is compared as its
//     llm.response entries in order, followed by one agent.tokens per
//     message_id with the run's text concatenated and counts summed:
//     the text, its order and the number of tokens are still compared.
//   - The request_id of llm.request and llm.response: "req_N" counts an
//     engine's model calls across all its sessions since it started, and
//     tier 2 ids ("tier2_...") are random; neither reaches the agent.
//     Request ids are compared up to a consistent renaming: the first
//     produced id is taken to be the recorded one at the same position,
//     and from then on must appear exactly where that one does.
//
// Approval ids are random too, but they reach the agent (a denial's
// answer quotes its id), so a rerun reuses the recorded ones and they are
// compared like everything else.
//
// # Invariants
//
//   - Compare is a pure function of its two entry lists.
//   - Two lists are reported identical only if, after the normalisation
//     above, they have the same length and every pair has the same type
//     and canonically equal data.
//   - The first divergence reported is the earliest position at which
//     the normalised lists differ; its seq is the recorded entry's.
package rerun
