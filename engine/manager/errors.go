package manager

import "errors"

// Errors of Run.
var (
	// ErrStartTimeout is reported when an engine does not announce its
	// port in time.
	ErrStartTimeout = errors.New("engine did not complete its start-up protocol in time")
	// ErrEngineRefused is returned when the engine refused to start (exit
	// 78) for a reason a retry cannot cure; the reason follows it.
	ErrEngineRefused = errors.New("the engine refused to start")
)
