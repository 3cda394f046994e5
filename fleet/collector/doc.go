// Package collector is the fleet's collector: a durable JetStream
// consumer of every source ledger shipped under a subject prefix, which
// keeps each source as a mirror ledger (ledger.CreateMirror) in its
// store, verifies it as it grows, cosigns the checkpoints it verified as
// a witness (C2SP tlog-cosignature, cosignature/v1) and records what is
// wrong as alerts in its own ledger.
//
// # Store
//
//	STORE/collector.db              the collector's own opx ledger (fleet.* entries)
//	STORE/witness.key               its cosigner key (a note signer key, 0600)
//	STORE/status.json               sources and recent alerts, rewritten atomically
//	STORE/sources/<id>/ledger.db    one mirror ledger per source
//
// # Invariants
//
//   - A message is acknowledged only once what it carries is committed
//     (the mirror's entry or blob, the collector ledger's alert): a
//     crash between the commit and the ack redelivers it, and a resend
//     of an entry the mirror holds with the same bytes is dropped.
//   - A mirror holds only entries that parse, follow seq and chain by
//     prev from the source's genesis; blobs only once they hash to their
//     name. Everything else is an alert, never a write.
//   - A checkpoint is cosigned only after its signature verified with the
//     source's pinned key and its root is the mirror's own tree at its
//     size (which, the tree being the mirror's, proves it extends every
//     checkpoint before it). The cosigned note is recorded in the
//     collector's ledger before it is published; after a restart the
//     recorded one is published again, never signed anew.
//   - Every message is outside input (invariant 9): bodies are bounded by
//     fleet.Parse, and the per-source reorder buffer, the part assembly
//     and the alerts are bounded by the constants in limits.go, whatever
//     a source sends.
package collector
