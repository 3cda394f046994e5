// Package chronicle records what an action is about to change, so that it
// can be undone: the pre-state of every path (content as a blob, mode, or
// absent) before the executor runs, and the post-state (content hash)
// after.
//
// # Invariants
//
//   - A snapshot is taken before the action and recorded durably with it
//     (the engine's write-ahead rule); its id is its ledger seq.
//   - Content is stored by BLAKE3 hash in the ledger's blobs, so unchanged
//     content costs nothing, and every restore checks the hash first.
//   - A rollback follows the same write-ahead rule: the snapshot of what it
//     overwrites and its plan (chronicle.rollback_started: every path and
//     the state it will write) are durable before the first path changes,
//     and its chronicle.rollback names the plan. A plan with no outcome is
//     a rollback that was interrupted; Recover records what each planned
//     path holds then, measured from disk, before anything else is
//     recorded by the next writer (OpenPlans finds such plans).
//   - Paths are workspace-relative and resolved beneath the workspace by
//     the FS implementation; Chronicle never follows a final symlink: it
//     records and restores the link itself.
package chronicle
