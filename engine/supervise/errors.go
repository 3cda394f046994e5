package supervise

import "errors"

// Errors of Run.
var (
	// ErrGaveUp is returned when the crash budget is spent.
	ErrGaveUp = errors.New("crashed too often, giving up")
	// ErrRefused is returned when the child exits with ExitRefused.
	ErrRefused = errors.New("refused to start")
)
