// Package undo is the engine's side of Chronicle (the top-level chronicle
// package holds the snapshots' and rollbacks' logic): it snapshots before
// every mutating call, diffs the workspace after workspace-wide ones,
// applies retention, runs rollbacks, and records how a rollback a crash
// interrupted left the workspace.
//
// # What it owns
//
//   - Chronicle: the snapshot before a mutating call (SnapshotFiles,
//     SnapshotWorkspace), the diff after one (Diff), the protected paths
//     put back (RestoreProtected), retention (Retain), and rollbacks
//     (Rollback, with RollbackRequest and RollbackReport, what `opx
//     rollback --json` prints and ChronicleService answers).
//   - RecoverRollbacks: the outcome of each interrupted rollback, measured
//     from disk, recorded before the engine starts or opx rollback runs.
//   - WorkspaceFS: the workspace as Chronicle reads and writes it, strict
//     (no symlink followed).
//
// # Imports
//
// undo imports chronicle, ledger and its events, and engine/executor
// (the workspace), never the engine: the pipeline snapshots through it on
// every mutating call, so it sits below the core, as judge and otr do. It
// records through Recorder, which the engine's recorder satisfies (and
// offline rollbacks use it too).
//
// # Invariants
//
//   - Mutations are serialised (Lock): a workspace diff holds one call's
//     changes only, and a rollback never races a tool.
//   - Nothing runs that could not be undone: a path that cannot be
//     captured refuses the call.
//   - Only the workspace in use is ever read or changed by recovery; a
//     plan for another directory is recorded as interrupted, unmeasured.
package undo
