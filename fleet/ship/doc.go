// Package ship is the engine's side of the fleet: it ships every durable
// entry of the engine's ledger, the blobs the entries name and a hello
// per engine life to NATS JetStream (fleet's wire format), and records
// the witness's cosignatures of the ledger's checkpoints as
// ledger.cosigned entries.
//
// # Invariants
//
//   - Only durable entries are shipped (invariant 10): the shipper reads
//     the committed ledger up to the writer's durable watermark, woken
//     when it moves; the tool path never waits for NATS.
//   - Entries are published in seq order, each entry's stored bytes
//     verbatim, each blob it names (its stored zstd frame) before it. A
//     blob missing locally (pruned) is skipped: the collector checks the
//     entry that pruned it.
//   - The cursor (ledger meta "cursor.fleet.<stream>", Ledger.Cursor) is
//     the highest seq S such that JetStream acknowledged every entry up
//     to S. It is persisted at most about once a second and at Close,
//     and never ahead of an acknowledgement, so a restart resends at most
//     what was acknowledged since the last write: JetStream's duplicate
//     window (message id "<ledger id>:<seq>") or the collector drops it.
//   - On (re)connect the shipper also reads the subject's last message:
//     when it is one of this ledger's entries, byte for byte, shipping
//     resumes after it.
//   - At most MaxInFlight messages and MaxInFlightBytes bytes await an
//     acknowledgement. On any publish error the shipper waits for the
//     outstanding ones, then resends from the cursor: the collector sees
//     each entry again in order (its reorder buffer is at least this
//     window).
//   - Memory is bounded whatever the ledger holds: one read of the ledger
//     holds at most 256 entries and about 8 MiB (plus one entry), blobs
//     are read in parts of fleet.MaxChunk, and the window above bounds
//     what awaits acknowledgement.
//   - A cosignature message is outside input: bounded (fleet.MaxCosigBytes),
//     recorded only when its checkpoint carries the ledger's own
//     signature and its tree is the ledger's own tree at that size, and
//     only when it is newer than the last one recorded.
package ship
