package grpcapi

import (
	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/engine/checkpoint"
	"github.com/opx-dev/opx/engine/gateway"
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

// Every engine serves the client service and the LLM gateway, whoever
// starts it and whatever its Options.Services: a rerun's engine
// (engine/redrive) too, whose agent's model calls go through the
// gateway.
func init() { engine.UseServices(registerCore) }

// registerCore registers ClientService and LLMGateway of e on srv.
func registerCore(srv *grpc.Server, e *engine.Engine) {
	opxv1.RegisterLLMGatewayServer(srv, gateway.NewService(e))
	opxv1.RegisterClientServiceServer(srv, &clientService{e: e})
}
