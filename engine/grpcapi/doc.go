// Package grpcapi holds gRPC services of the engine that are thin
// adapters over it: the ledger service (reads, Verify, Prove, notes,
// rebuilds, for clients while the engine holds the ledger file; also the
// fleet collector's read-only mirrors, NewReadOnlyLedgerService) and the
// Chronicle service (rollbacks run in the engine).
//
// It may import the engine's core (package engine) and its leaf packages
// (engine/checkpoint, engine/undo), ledger and the generated proto; the
// core never imports it: whoever starts an engine passes Register as
// engine.Options.Services (cli's internal-engine, the tests).
//
// Invariants: the services only read the ledger, except AppendNote (an
// investigator's note) and Rebuild (projections), and never answer past
// the durable head (engine.DurableHead); authentication is the engine's
// (its interceptor runs before any handler here). The agent, client,
// sub-agent, MCP proxy and LLM gateway services are still in the core:
// they reach into its connection and session state.
package grpcapi
