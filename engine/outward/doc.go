// Package outward is what the engine hands to the world outside the
// machine while it runs: its ledger to the fleet's collector (a Shipper,
// fleet/ship) and its signed checkpoints to C2SP tlog-witnesses
// (Witnesses, engine/witness). The engine owns these interfaces so that
// it never imports the fleet or the witness client (whose collector
// imports the engine's packages): whoever starts the engine starts them
// (engine.Options.Fleet, Options.Witnesses), and Set runs them beside it:
// started in the background, never on the tool path, asked where they
// stand, drained and stopped when the engine stops.
//
// It imports only ledger/event and the protocol package: it sits below
// the engine's core.
package outward
