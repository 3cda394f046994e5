package chronicle

import "errors"

// Errors of capture and scan.
var (
	// ErrTooLarge is returned when a file named by a tool is too large to
	// snapshot: the tool does not run.
	ErrTooLarge = errors.New("file too large to snapshot")
	// ErrNotSnapshottable is returned for a path that is not a regular
	// file, directory or symlink (a socket, a device, a fifo).
	ErrNotSnapshottable = errors.New("not a file, directory or symlink")
)

// Errors of reading what a snapshot recorded.
var (
	// ErrManifest is returned when a workspace snapshot's manifest blob
	// does not parse, is not in canonical form, or lists paths out of
	// order.
	ErrManifest = errors.New("malformed manifest")
)

// Errors of rollback.
var (
	// ErrNoSnapshot is returned when the id given is not a snapshot's seq.
	ErrNoSnapshot = errors.New("no such snapshot")
	// ErrConflict is returned (wrapped in a *ConflictError) when paths
	// changed since the recorded post-state and --force was not given.
	ErrConflict = errors.New("rollback conflicts with later changes")
	// ErrRollbackTooLarge is returned when a rollback names more paths
	// than its plan can record in one entry: nothing is changed.
	ErrRollbackTooLarge = errors.New("rollback too large to record")
	// ErrPruned is returned when content a rollback needs was removed by
	// retention (recorded in a chronicle.pruned entry).
	ErrPruned = errors.New("snapshot content pruned by retention")
	// ErrOmitted is returned when content a rollback needs was never kept
	// (the file was larger than the snapshot limit).
	ErrOmitted = errors.New("snapshot content was not kept")
	// ErrNothingToRestore is returned when a session has no snapshots.
	ErrNothingToRestore = errors.New("nothing to restore")
)
