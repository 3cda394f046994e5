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
//   - For a session of an agent audited through its hooks (mode
//     claude-code, codex, gemini-cli): hook.unrecorded naming its agent
//     and the agent's session id, wherever it is (an engine records at
//     its start the calls the hook let through while none ran).
//
// # Sub-agents: a tree out of interleaved entries
//
// A sub-agent's entries are in its parent's session with its subagent_id,
// interleaved with the parent's and its siblings'. The timeline groups
// them: the parent's call that spawned it (subagent.spawned's
// parent_call_id) holds the SubAgent, which holds its process's entries
// (with a subagent_id, wherever their session), its own turns (from each
// engine.process_request that names it), its end and where the parent
// learned of it. The parent's turns hold only the parent's steps; Totals
// count everyone's. Entries of a sub-agent the session never spawned stay
// at the top level and are Problems.
//
// # How an execution ended: one definition for every view
//
// A call that ran ends in exec.completed or exec.failed, and every view
// of the ledger (opx replay and its --json, opx report, opx metrics, opx
// snapshots, opx snapshot show) says how it ended with
// event.ExecOutcome, never with its own reading of the fields:
//
//   - failed: the tool could not do its work (a path that is not there,
//     arguments it refused, a connection refused, a command that could
//     not be started). That is every exec.failed, and every exec.completed
//     whose failed field is true. A ledger written before that field
//     recorded a tool's error as exit_code 1, so an exec.completed with a
//     non-zero exit_code for a tool that runs no process is failed too.
//   - exited ("ran, exit N"): a process the tool ran (execute_command,
//     git_*) exited non-zero or was killed. The tool worked; the command's
//     result is the news, and it may have changed files. (In a ledger
//     written before the failed field, a command that could not start is
//     shown so too: nothing there tells them apart.)
//   - completed: everything else that ended.
//
// Blocked (a block verdict) and denied (an approval resolved with no,
// although the engine records that as a tier 3 block too) are outcomes of
// calls that never ran. What a call changed is the paths whose recorded
// post-state differs from its snapshot's pre-state (a workspace snapshot:
// what the diff after the command found), so a failed call that changed
// nothing is never shown as a change.
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
