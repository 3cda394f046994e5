package engine

import "errors"

// Causes of a stop that the embedding program gives Run's context (with
// context.WithCancelCause); Run records each in engine.stopped and
// returns nil for them.
var (
	// ErrManagerGone is the cause when the engine's process manager died:
	// its liveness pipe closed, or the parent-death signal came.
	ErrManagerGone = errors.New("manager gone")
	// ErrSignalled is the cause when the engine got SIGTERM or SIGINT from
	// a live manager (or an operator).
	ErrSignalled = errors.New("signalled")
)

// Refusals of a client's request.
var (
	// ErrStopping is returned when a client asks the engine to record
	// something (a checkpoint on demand) while it stops.
	ErrStopping = errors.New("the engine is stopping")
)
