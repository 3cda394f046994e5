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
//	STORE/journal/<n>.wal           the write-ahead journal of every source (package journal)
//	STORE/engine.lock               the store's registry lock, held while the collector runs
//	STORE/witness.key               its cosigner key (a note signer key, 0600)
//	STORE/status.json               sources and recent alerts, rewritten atomically
//	STORE/sources/<id>/ledger.db    one mirror ledger per source
//	STORE/sources/<id>/engine.lock  a symbolic link to STORE/engine.lock
//	STORE/sources/<id>/engine.json  its registry entry while the collector runs
//	STORE/sources/<id>/client.token (serve.go)
//
// # Journal and mirrors
//
// A batch is verified in memory against each source's verified head
// (next, prev); what it verified is appended to the journal and synced
// once, whatever the number of sources (commit, source.go); then the
// messages are acknowledged. The materializer (materialize.go) writes
// the records to the mirrors behind it, each source in turn, in bounded
// durable commits; the run loop then runs what needed the mirror (a
// checkpoint's tree, add-checkpoint's pending comparisons) and the
// journal forgets the records. Mirrors are opened on demand and closed
// when unused (mirrors.go).
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
//   - A message is acknowledged only once what it carries is durable
//     (the journal's record of the entry or blob, synced; the collector
//     ledger's alert): a crash between the sync and the ack redelivers
//     it, and a resend of an entry the collector holds (in its mirror or
//     its journal) with the same bytes is dropped.
//   - A mirror holds a prefix of what was acknowledged for its source;
//     every record of the journal is in its mirror before the journal
//     forgets it, and at start the journal is written to the mirrors
//     (recoverJournal: a record a mirror holds is skipped once found
//     byte-identical) before anything is consumed. A SIGKILL at any
//     moment loses nothing acknowledged and duplicates nothing.
//   - What waits to be materialized is at most MaxPendingBytes (the
//     consumer stops pulling beyond it); at most MaxOpenMirrors unused
//     mirrors are open; an idle source holds no descriptor.
//   - A mirror holds only entries that parse, follow seq and chain by
//     prev from the source's genesis; blobs only once they hash to their
//     name. Everything else is an alert, never a write. An entry is
//     parsed and checked once, when it arrives (ledger.CheckVerified);
//     its mirror takes only what that check made (ledger.AppendVerified,
//     which checks seq and prev against the mirror's head again), and
//     what recovery reads back from the journal is checked in full.
//   - A checkpoint is cosigned only after its signature verified with the
//     source's pinned key and its root is the mirror's own tree at its
//     size (once the mirror holds it) (which, the tree being the mirror's, proves it extends every
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
