package registry

import "errors"

// Errors of the registry.
var (
	// ErrRunning is returned by Acquire when a manager already runs for
	// the workspace.
	ErrRunning = errors.New("opx is already running for this workspace")
	// ErrNotRunning is returned by Lookup and Orphan when no engine runs
	// (with a note when an engine runs without its manager).
	ErrNotRunning = errors.New("opx is not running for this workspace (start it with opx start)")
	// ErrStarting is returned by Lookup while a manager runs but its
	// engine is not (yet, or again) up.
	ErrStarting = errors.New("opx is starting for this workspace; try again in a moment")
	// ErrGone is returned when a process named by an entry has exited, or
	// its pid now names another process.
	ErrGone = errors.New("process gone")
)
