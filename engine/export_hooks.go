package engine

import (
	"context"
	"sync"

	"google.golang.org/grpc"
)

// What the core asks of the sessions of the coding agents audited through
// their hooks (engine/hooks), which import the engine: the engine reaches
// them only through Hooks, made by the function engine/hooks registers
// (UseHooks) when it is linked in.

// Hooks is the engine's hook sessions, as the core uses them.
type Hooks interface {
	// Bind gives the set its engine, once New has made it.
	Bind(e *Engine)
	// Register serves HookService on the engine's server.
	Register(srv *grpc.Server)
	// Recover runs once the engine's engine.started is recorded and
	// before it serves: it closes the calls a crashed engine left open
	// and records what hooks answered while no engine ran.
	Recover(ctx context.Context) error
	// Stop closes every open call and session (the engine stops; its
	// approvals are denied already) and opens no more; each end is
	// recorded before engine.stopped.
	Stop(reason string)
}

var (
	hooksMu  sync.Mutex
	newHooks func() Hooks
)

// UseHooks sets how each engine makes its hook sessions: engine/hooks
// calls it when it is linked in. Without it an engine serves no
// HookService (a hook is told Unimplemented, and fails closed).
func UseHooks(f func() Hooks) {
	hooksMu.Lock()
	newHooks = f
	hooksMu.Unlock()
}

// makeHooks returns a new set of hook sessions, or none.
func makeHooks() Hooks {
	hooksMu.Lock()
	f := newHooks
	hooksMu.Unlock()
	if f != nil {
		return f()
	}
	return noHooks{}
}

// noHooks is an engine's set when none is linked in.
type noHooks struct{}

func (noHooks) Bind(*Engine)                  {}
func (noHooks) Register(*grpc.Server)         {}
func (noHooks) Recover(context.Context) error { return nil }
func (noHooks) Stop(string)                   {}

// CrashedRun is the range of entries of the engine run that ended
// without engine.stopped, found when this engine started: from its
// engine.started (since) to the last entry it left (head); ok is false
// when the last run stopped cleanly.
func (e *Engine) CrashedRun() (since, head uint64, ok bool) {
	return e.crashedSince, e.crashedHead, e.crashedSince > 0
}

// StartedSeq is this engine's engine.started.
func (e *Engine) StartedSeq() uint64 { return e.startedSeq }
