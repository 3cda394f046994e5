// Package fleet ships ledgers off the machine they were written on and
// collects them: the wire format on NATS JetStream shared by the engine's
// shipper (fleet/ship) and the collector (fleet/collector).
//
// # Wire format (normative: shipper and collector of different versions
// meet on it; change it only with WireVersion)
//
// Streams (created by whichever side comes first, same config):
//   - LedgerStream(prefix), subjects "<prefix>.ledger.*": one subject per
//     source ledger, "<prefix>.ledger.<ledger id>", holding, in the order
//     the source commits them, its hello messages, its entries and the
//     blobs its entries name (each blob before the first entry naming it).
//     Limits retention, file storage, Duplicates window DedupWindow.
//   - CosigStream(prefix), subjects "<prefix>.cosig.*": the witness's
//     cosigned checkpoints for each source, "<prefix>.cosig.<ledger id>",
//     MaxMsgsPerSubject 1 (only the latest matters; every one of them is
//     also recorded in the collector's own ledger).
//
// Messages on a ledger subject carry headers (values ASCII, bounded):
//   - Opx-Wire: WireVersion.
//   - Opx-Kind: "hello", "entry" or "blob".
//   - entry: Opx-Seq (decimal seq), Opx-Size (the entry's total bytes),
//     Opx-Part "i/n" (0-based part of n; the body is that part of the
//     stored entry bytes, verbatim). Nats-Msg-Id EntryMsgID.
//   - blob: Opx-Blob (64 hex: BLAKE3 of the uncompressed content, the
//     ledger's blob key), Opx-Size (the stored zstd frame's total bytes),
//     Opx-Part "i/n"; the body is that part of the stored frame.
//     Nats-Msg-Id BlobMsgID.
//   - hello: the body is a Hello (JSON), Nats-Msg-Id HelloMsgID.
//
// Parts are at most MaxChunk bytes, so any NATS server's default
// max_payload (1 MiB) takes them. An entry is split only when it is
// larger than MaxChunk; its last part carries the Nats-Msg-Id
// "<ledger id>:<seq>", earlier ones "<ledger id>:<seq>/<i>".
//
// Two variants of an entry's ids exist, so that JetStream's duplicate
// window never hides what must be seen (the collector drops a resend of
// an entry it holds, byte for byte, itself):
//   - a shipper whose publish JetStream acknowledged as a duplicate
//     checks the stored message; if its bytes differ (another history
//     under the same ledger id got there first), it publishes its own
//     entry again with the id EntryMsgID + "#" + the first 16 hex of the
//     entry's BLAKE3 (ConflictMsgID), which the collector then sees and
//     flags as a fork;
//   - a resend asked for by a collector (ResendRequest on CtlSubject,
//     core NATS) carries EntryMsgID + "@" + the request's epoch
//     (ResendMsgID), for entries and blob parts alike, so that entries
//     stored once but lost to the collector arrive again.
//
// Control subject "<prefix>.ctl.<ledger id>" (core NATS, no stream): a
// collector that lacks entries of a source (a gap that did not fill, a
// stream whose retention dropped them) publishes a ResendRequest; the
// source's shipper, at most once per ResendEvery, ships again from From.
// Only collectors should be allowed to publish there (NATS permissions).
package fleet
