// Package liveledger is the running engine's ledger as the review
// commands read it (moved from cli/ledger_remote.go): Dial connects to the
// engine registered for a ledger file's directory and fixes its durable
// head; Ledger is then a ledger.Source (entries, blob frames, batches,
// tiles, consistency proofs) whose every byte the caller checks itself,
// with what an engine may send bounded here (MaxMessage, checkSent,
// frameReader). OpenEngineOrFile opens a ledger for review: the file when
// no engine holds it, else the engine's ledger.
//
// Used by every command that reads a ledger an engine may hold (verify,
// show, tail, follow, note, rebuild, prove, replay, the Chronicle
// source). Imports: ledger, the protocol, engine (TokenHeader) and
// engine/registry, and cli/internal/{ledgerloc,usage}; never package cli.
package liveledger
