// Package redrive re-drives a recorded session through a fresh engine and
// the real agent (Rerun: `opx replay --rerun`), and re-judges a session's
// recorded proposals under another policy (WhatIf: `opx replay --policy`).
//
// It is not replay/rerun: that package only reads a ledger (Load: the
// session's record) and compares entries (Compare), and imports no engine.
// This package runs an engine in replay mode over that record: it
// implements engine.ReplayMode (the recorded model answers, verdicts,
// approvals, snapshots and results, the recorded MCP listings) and feeds
// the recorded client messages; its report is rerun.Compare's.
//
// It owns the replay-mode state (replayState), everything the engine
// asks of it, and putting the engine New built into replay mode (Attach:
// tier 2 on the recorded model, approvals answered as recorded through
// engine.Approvals.Recorded); the engine's side of replay mode (the
// interface, NewReplay, the mcp-proxy session's re-drive, what
// engine.started records for a rerun) stays in the core
// (engine/rooms.go: ReplayMode).
//
// Imports: the core (engine) and the engine's own lower packages
// (executor, llm, mcp, tier2), ledger, replay/rerun and replay/projection,
// shield, fixtures, proto; engine/grpcapi only to link it in (its
// registration serves the LLM gateway the rerun's agent calls). The core
// never imports this package: New takes
// the replay mode through engine.NewReplay, and only its callers (cli,
// tests) import redrive.
//
// Invariants: the investigated ledger is only read; the rerun records
// into a fresh ledger over an empty workspace; no executor runs and no
// MCP server or upstream is called; a divergence is a report, never an
// error.
package redrive
