package engine

import (
	"context"

	"github.com/opx-dev/opx/engine/undo"
	"github.com/opx-dev/opx/ledger"
	"google.golang.org/grpc"
)

// What the gRPC services of engine/grpcapi reach the engine through: the
// core never imports them (Options.Services registers them).

// ServiceRegistrar registers gRPC services on the engine's server, behind
// its authenticator and durable answers (Options.Services).
type ServiceRegistrar = func(srv *grpc.Server, e *Engine)

// Ledger is the ledger the engine records in (Options.Ledger).
func (e *Engine) Ledger() *ledger.Ledger { return e.opts.Ledger }

// Chronicle is the engine's Chronicle: its snapshots and rollbacks.
func (e *Engine) Chronicle() *undo.Chronicle { return e.chron }

// Logf reports to the engine's operator (Options.Logf).
func (e *Engine) Logf(format string, args ...any) { e.opts.Logf(format, args...) }

// Stopping is closed once the engine stops (Run's context is done):
// followers leave.
func (e *Engine) Stopping() <-chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.running.Done()
}

// CheckpointOnDemand records a checkpoint for a client that needs one
// covering an entry appended since the latest, and returns once it is
// durable; ErrStopping once the engine stops (session.go's
// checkpointOnDemand). Callers bound how often (checkpoint.OnDemand).
func (e *Engine) CheckpointOnDemand(ctx context.Context) error { return e.checkpointOnDemand(ctx) }

// DurableHead is the head a client may be told of (durable.go).
func DurableHead(l *ledger.Ledger) (ledger.Head, error) { return durableHead(l) }

// ClientName is the name a client call is recorded under: what the
// client says in its opx-client header, clipped, else "grpc".
func ClientName(ctx context.Context) string { return clientName(ctx) }
