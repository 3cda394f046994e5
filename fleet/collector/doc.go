// Package collector is the fleet's collector: a durable JetStream
// consumer of every source ledger shipped under a subject prefix, which
// keeps each source as a mirror ledger (ledger.CreateMirror) in its
// store, verifies it as it grows, cosigns, as a witness, the latest
// checkpoint of each source it verified in each batch of messages (C2SP tlog-cosignature, cosignature/v1) and records what is
// wrong as alerts in its own ledger.
//
// # Store
//
//	STORE/collector.db              the collector's own opx ledger (fleet.* entries)
//	STORE/witness.key               its cosigner key (a note signer key, 0600)
//	STORE/status.json               sources and recent alerts, rewritten atomically
//	STORE/sources/<id>/ledger.db    one mirror ledger per source
//	STORE/sources/<id>/engine.*     its registry entry while the collector runs
//	STORE/sources/<id>/client.token (serve.go)
//
// # Alerts
//
// fleet.alert entries (event.AlertKinds) with the source, the source seq
// and what was found: broken-chain (the next entry's prev is not the
// hash of the one before), rewrite (an entry the mirror holds sent again
// with other bytes), fork (a signed checkpoint for a size the mirror
// holds with another root; a hello naming a head the mirror holds with
// another hash; a broken chain after one), rewind (a hello naming a head
// behind what was shipped), gap (entries waited for beyond the reorder
// bounds or GapAfter; a tree cosigned over add-checkpoint that the
// mirror still lacks Config.WitnessAheadAfter later, the source having
// shipped since), bad-signature (a checkpoint not signed by the
// pinned key, or unsigned after a key was pinned), key-replaced (a
// ledger.key other than the pinned one: it is not trusted), stalled
// (nothing for Config.StallAfter), malformed (a message or entry that
// does not parse), bad-blob (a blob that is not its hash's content).
// One alert per source, kind and seq (per message for malformed and
// bad-blob), at most MaxAlertsPerKind per source and kind.
//
// After a broken chain, the entries that chain onto the breaking one are
// dropped (counted): the mirror stays the history first shipped. Which
// of two processes' entries for one seq JetStream keeps is whichever was
// published first (the other is a duplicate of its message id); the
// fork alert is what tells.
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
//     a source sends. What grows with the input is what the input pays
//     for: one small record per distinct source id (at most
//     Config.MaxSources of them), and the mirrors and alerts themselves.
//   - Entries that do not come are asked for again (resend.go), never
//     waited for without end; the status shows only checkpoints verified.
package collector
