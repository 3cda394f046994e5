// Package outward is what the engine hands to the world outside the
// machine while it runs: its ledger to the fleet's collector (a Shipper,
// fleet/ship), its signed checkpoints to C2SP tlog-witnesses (Witnesses,
// engine/witness) and its entries as OpenTelemetry spans to an OTLP
// collector (Telemetry, telemetry.Live). The engine owns these interfaces
// so that it never imports the fleet, the witness client or the
// OpenTelemetry SDK (the collector imports the engine's packages):
// whoever starts the engine starts them (engine.Options.Fleet,
// Options.Witnesses, Options.Telemetry), and Set runs them beside it:
// started in the background, never on the tool path, asked where they
// stand, drained and stopped when the engine stops.
//
// It imports only ledger/event and the protocol package: it sits below
// the engine's core.
package outward
