// Package rerun is the record side of `opx replay SESSION --rerun`: it
// reads a recorded session out of a ledger (Load), with everything an
// engine in replay mode needs to re-drive it (the engine configuration in
// force, the client messages, the raw model request and response bodies,
// each proposal's verdicts, snapshot and result, the approvals' answers),
// and it compares the entries a rerun produced with the recorded ones
// (Compare), reporting the first divergence as a unified diff.
//
// The engine's replay mode (engine/redrive) does the re-driving; this
// package knows nothing of engines, so a comparison can be tested, and a
// record read, on its own.
//
// # What is compared
//
// The entries whose session is the rerun session, thread by thread (see
// Threads), each thread in seq order, each entry by type and payload
// (data). Entries outside the session (engine and agent
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
// # Threads
//
// A session with sub-agents holds several threads: the session's own
// agent's entries (no subagent_id) and each sub-agent's, everything that
// names it in subagent_id: its lifecycle (subagent.spawned, then
// subagent.completed, failed, cancelled or timed_out) and what it caused
// (engine.process_request, llm.*, agent.tokens, agent.tool_call,
// tool.proposed, shield.verdict, approval.*, chronicle.snapshot, exec.*,
// engine.tool_result, agent.response_complete, engine.shutdown,
// agent.error). Sub-agents run in parallel, so how their entries
// interleave with each other's and with the parent's depends on
// scheduling; the order within a thread does not. Compare splits both
// lists by thread and compares each thread on its own, in its own order;
// the order between threads is not compared. What ties them together is:
// the parent's spawn_agent result names the sub-agent's id (derived from
// the session, message and call, so a rerun mints the same),
// subagent.spawned names the parent's call, and the parent reads each
// sub-agent's answer through agent_result, all compared.
//
// A sub-agent's process lifecycle (agent.spawned, sandbox.canary,
// agent.ready, agent.exited, agent.crashed) is recorded in the parent's
// session but, like the session's own agent's (recorded engine-wide), is
// not compared: pids, ports, canary timestamps, and whether its process
// exited in order or was killed after it answered depend on the run. What
// decides anything is compared: a refused sandbox or a crash ends the
// sub-agent with subagent.failed.
//
// After a sub-agent's end entry, its last words are not compared either:
// what its dying process still sent (agent.* entries) and the refusals of
// calls it sent then, never proposed (engine.tool_result without a
// tool.proposed in its thread); whether they got out before it was killed
// depends on scheduling. What the engine did after the end about calls in
// flight at it (the model's answer, a command's result, an approval denied
// by the end) is compared. Result.Uncompared counts what was left out.
//
// The first divergence reported is the earliest, by the record's seq, of
// each thread's first divergence; it names the sub-agent whose thread it
// is (Divergence.SubAgentID).
//
// # Volatile fields
//
// Exactly these differ legitimately between two runs and are ignored:
//
//   - The entry envelope's ts, seq and prev (only type and data are
//     compared; order is compared by position).
//   - llm.response latency_ms, exec.completed duration_ms,
//     exec.failed duration_ms and the duration_ms of the entry that ends
//     a sub-agent (subagent.completed, failed, cancelled, timed_out):
//     wall-clock measurements.
//   - Members a payload gained after a ledger was recorded, when the
//     recorded entry lacks them: approval.requested message_id and
//     arguments (recorded since 2026-11-23).
//   - agent.tokens coalescing: the engine coalesces streamed tokens into
//     entries as they arrive, and the gateway records llm.response while
//     the agent is still forwarding the same call's tokens, so how a
//     call's text is split across agent.tokens entries, and where its
//     llm.response falls among them, depend on scheduling. Each maximal
//     run of agent.tokens and llm.response entries of a thread is
//     compared as its llm.response entries in order, followed by one
//     agent.tokens per message_id with the run's text concatenated and
//     counts summed: the text, its order and the number of tokens are
//     still compared.
//   - The request_id of llm.request and llm.response: "req_N" counts an
//     engine's model calls across all its sessions since it started, and
//     tier 2 ids ("tier2_...") are random; neither reaches the agent.
//     Parallel sub-agents take "req_N" numbers in the order they happen
//     to call. Request ids are compared up to a consistent renaming, one
//     to one across all threads: the first produced id is taken to be
//     the recorded one at the same position of the same thread, and
//     from then on must appear exactly where that one does.
//
// Approval ids are random too, but they reach the agent (a denial's
// answer quotes its id), so a rerun reuses the recorded ones and they are
// compared like everything else.
//
// # Sessions of agents audited through their hooks
//
// A session of mode claude-code, codex or gemini-cli (Recording.Hook)
// recorded an agent that called its model itself: no model request or
// answer of it is in the ledger to be served again, and opx ran none of
// its tools. Load reads its agent (hook.session) and its calls
// (hook.tool_call), each with the proposals of its opx calls
// (Proposal.AgentCall); such a session is re-judged, not re-driven
// (engine/redrive.Rejudge).
//
// # Invariants
//
//   - Compare is a pure function of its two entry lists.
//   - Two lists are reported identical only if, after the normalisation
//     above, they have the same threads, and in each thread the same
//     length and every pair the same type and canonically equal data.
//   - The first divergence reported is, of each thread's earliest
//     position at which the normalised lists differ, the one earliest in
//     the record; its seq is the recorded entry's.
package rerun
