// Package grpcapi holds gRPC services of the engine that are thin
// adapters over it: the client service (messages, sessions, history,
// approvals, status, stop; the message's path itself is the core's
// Engine.SendMessage), the ledger service (reads, Verify, Prove, notes,
// rebuilds, for clients while the engine holds the ledger file; also the
// fleet collector's read-only mirrors, NewReadOnlyLedgerService) and the
// Chronicle service (rollbacks run in the engine).
//
// It may import the engine's core (package engine) and the packages
// beside and below it (engine/gateway, engine/checkpoint, engine/undo),
// ledger, replay/projection and the generated proto; the core never
// imports it. Linked in, it registers the client service and the LLM
// gateway (engine/gateway) on every engine's server (engine.UseServices:
// a rerun's engine serves its agent's model calls too); whoever starts an
// engine passes Register as engine.Options.Services for the ledger and
// Chronicle services (cli's internal-engine, the tests).
//
// Invariants: the services only read the ledger, except AppendNote (an
// investigator's note), Rebuild (projections) and what the client
// service asks of the engine, and never answer past the durable head
// (engine.DurableHead); authentication is the engine's (its interceptor
// runs before any handler here). The agent, sub-agent, MCP proxy and hook
// services are the core's and its rooms': they reach into connection and
// session state.
package grpcapi
