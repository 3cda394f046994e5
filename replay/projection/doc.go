// Package projection holds the engine's state as folds of the ledger:
// sessions, their history, snapshots by session and by path, approvals,
// and metrics. Each is a ledger.Projection, applied in the transaction
// that appends an entry, kept in its p.<name> bucket, and rebuilt from the
// entries alone by `opx ledger rebuild` (byte-identical).
//
// # Invariants
//
//   - A fold reads only its bucket and the entry: no clock, no randomness,
//     no map iteration, no state outside the ledger.
//   - Values are JSON of fixed structs (fields in declaration order), so
//     the same entries always give the same bytes.
//   - Each projection's Version changes whenever what it writes changes;
//     a ledger holding another version rebuilds it on open.
//   - Nothing here is the source of truth: any bucket may be deleted and
//     folded again from the entries.
package projection
