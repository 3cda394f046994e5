package grpcapi

import (
	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/engine/checkpoint"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"google.golang.org/grpc"
)

// Register registers the ledger and Chronicle services of e on srv, the
// engine's server (engine.Options.Services): whoever starts the engine
// passes it; the engine's authenticator and durable answers stand in
// front of them as of the core's own services.
func Register(srv *grpc.Server, e *engine.Engine) {
	opxv1.RegisterLedgerServiceServer(srv, &ledgerService{led: e.Ledger(), ownPlan: func(seq uint64) bool { return e.Chronicle().OwnPlan(seq) },
		stopping: e.Stopping, fresh: checkpoint.NewOnDemand(e.CheckpointOnDemand, checkpoint.DefaultOnDemandEvery)})
	opxv1.RegisterChronicleServiceServer(srv, &chronicleService{e: e})
}

var _ engine.ServiceRegistrar = Register
