// Package replay reads a session back out of the ledger: Build folds its
// entries into a Timeline (turns, model calls, tool calls with their
// verdicts, approvals, snapshots and executions, errors and crashes), and
// Changes reconstructs the file changes its snapshots recorded. The
// `opx replay` and `opx report` commands print what they return. The
// projections the engine folds live in replay/projection; deterministic
// re-runs and what-if policy checks in replay/rerun.
//
// # Which entries belong to a session
//
//   - Every entry whose session field is the session's id.
//   - Engine-wide entries about the agent or engine dying or coming back
//     (agent.crashed, agent.spawned, sandbox.canary, agent.exited,
//     engine.started, engine.stopped, engine.shutdown) that fall inside the
//     session's activity span: from its first to its last entry, leaving
//     out ledger.note, which an investigator may add any time later.
//   - engine.crashed when the engine run it reports (started_seq..last_seq)
//     overlaps that span: the engine died while serving the session.
//   - chronicle.rollback of the session, of one of its snapshots, or of the
//     snapshot a rollback of it took (undoing the undo), wherever it is.
//
// # Invariants
//
//   - A timeline is a pure function of the entries read: the same ledger,
//     session and options give the same Timeline, so the JSON and the
//     report of a session can be compared byte for byte.
//   - Build reads entries only; content (file bodies, large results) is
//     named by hash, and read and hash-checked by Changes and the callers.
//   - Every item keeps the seq of each entry it was built from, so an
//     investigator can check it with `opx ledger show SEQ`.
//   - With Options.At, nothing after that seq is read: the timeline is the
//     session as the ledger knew it then.
//   - Tool calls are told apart by sub-agent and call id, the latest
//     proposal of an id being the call later entries are about (models
//     reuse call ids), as the causality check of ledger/event does.
//   - Token totals are the gateway's (llm.response usage, recorded by the
//     trusted side), not what the agent reported in response_complete.
package replay
