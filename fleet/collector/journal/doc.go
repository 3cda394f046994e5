// Package journal is the fleet collector's shared write-ahead journal:
// what the collector verified of every source, appended in one file and
// made durable with one fsync per batch (group commit), before the
// messages that carried it are acknowledged. The mirrors are written
// from it later (materialized), each in its own bbolt commit.
//
// # Layout
//
//	DIR/<16 digits>.wal   segments, in order of their number
//
// A segment starts with the line "opx-journal/1\n" and holds records:
//
//	u32 length of the body (big endian)
//	body: kind (1 byte), source ledger id (16 bytes, the id's hex
//	      decoded), seq (u64), blob hash (32 bytes, zero for an entry),
//	      data (the entry's bytes or the blob's stored frame)
//	u32 CRC-32C of the length and the body
//
// # Invariants
//
//   - Append writes; Sync makes durable every record appended before it
//     (fdatasync of the active segment, and of the directory when a
//     segment was created since the last Sync). A record is never
//     acknowledged to anyone before the Sync that follows its Append.
//   - A record's length is at most MaxRecord, and never more than what
//     its segment still holds: reading a journal holds at most one
//     record at a time, whatever the files say.
//   - Replay cuts a torn tail of the last segment (a record cut short or
//     failing its CRC: what a crash during a write leaves, never
//     acknowledged) and says how much it cut. A bad record in any
//     earlier segment is an error (ErrCorrupt) and nothing is removed:
//     those records were acknowledged, so the collector stops.
//   - A segment is removed only when every record in it was reported
//     Done (durable elsewhere) and it is not the one being appended to.
package journal
