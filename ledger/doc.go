// Package ledger is opx's append-only, BLAKE3 hash-chained record, kept in
// one bbolt file, with JSONL(.zst) export and import. It knows nothing of
// agents: entry types and payloads are its callers' business.
//
// # Format (opx-ledger/1, normative)
//
// Bucket "entries" maps seq (8-byte big-endian) to the entry bytes, which
// are exactly the bytes hashed. Bucket "meta" holds format, ledger_id,
// head_seq (decimal ASCII) and head_hash (64 lowercase hex). Bucket "blobs"
// maps the 32-byte BLAKE3-256 of a blob's uncompressed content to one zstd
// frame of it. Buckets named "p.<name>" are disposable projections.
//
// An entry is one RFC 8785 (JCS) canonical JSON object:
//
//	{"data":{...},"prev":"<64 hex>","seq":N,"session":"...","ts":"...","type":"area.event"}
//
// # Invariants
//
//   - seq is 0 for the genesis entry and grows by one; it equals the key.
//   - Each entry's prev equals the BLAKE3-256 of the previous entry's
//     bytes; the genesis prev is 64 zeros. The head hash is the hash of
//     the last entry, and meta head_seq/head_hash always name it: entries
//     and head are written in the same transaction.
//   - Entries hold integers only (no floats), at most 2^53-1 in magnitude,
//     so independent JSON tools read them exactly.
//   - An entry names content by a member "blob" (or "<x>_blob") whose value
//     is the content's 64-hex hash; the blob is stored in the same
//     transaction as the entry. Blobs are hash-checked on every read.
//   - Nothing in this package rewrites or deletes an entry. Retention
//     removes blobs only, after a chronicle.pruned entry lists them.
//
// # Writing
//
// One process holds the file (bbolt's lock). Append chains entries under a
// mutex and a single committer goroutine writes each group of queued
// entries in one transaction and one fsync (group commit), so many
// concurrent Sync appenders share an fsync and order is preserved. A failed
// commit makes the writer refuse every later append (ErrBroken).
//
// # Reading and verifying
//
// OpenReadOnly shares the file with other readers for offline review.
// Verify checks every entry on all cores (each entry carries its prev, so
// chunks are hashed independently and joined at their boundaries) and
// reports every failure with its seq and kind, never only the first.
//
// # Reading outside input
//
// An export, its bundle and a ledger file may come from anywhere, so every
// reader of them runs in bounded memory and turns damage into a finding
// or an error, never a crash or a hang:
//
//   - One export reader turns any .jsonl or .jsonl.zst into lines and
//     accounts for every byte: a line over MaxLineSize (16 MiB, the
//     maximum entry size), an empty line, a CR, a NUL, a final line
//     without "\n" or bytes that do not decompress are failures at their
//     position, never skipped. It reads regular files only (a directory,
//     FIFO or device is ErrNotRegular), so nothing blocks or reads without
//     end. zstd windows are capped at MaxStreamWindow (16 MiB).
//   - Stream verification holds at most 48 MiB of lines in flight plus one
//     chunk (4 MiB and a line), lists the first MaxListedFailures failures
//     and counts the rest by kind, and hashes each blob as a stream (at
//     most four at once, each within one zstd window), refusing a blob
//     over MaxBlobSize. Import commits every 64 MiB of entries and blobs,
//     so it holds at most a few blob frames at once.
//   - The one term that grows with the input is the set of distinct blob
//     hashes the entries name (about 100 bytes each), for which an input
//     must spend at least 32 bytes of incompressible data each.
//
// Measured on the hostile-input table (hostile_export_test.go), the whole
// process peaks under 140 MiB; the tests hold it under 320 MiB.
//
// Open checks the file before bbolt maps it: the meta pages (a file cut
// short, whose meta names pages it does not hold, or without a valid
// meta), the freelist page of the meta bbolt will use, and the shape of
// its page tree (no page named twice, so no loop; branches not empty, in
// the file, at most 64 deep). A file that fails is ErrUnreadable ("not a
// readable ledger"). The walk reads branch pages and the root bucket
// only, about two pages in a hundred. A page damaged in a
// way that check cannot see faults or panics when read; every read of the
// map runs with the fault turned into a panic (debug.SetPanicOnFault) and
// recovered into ErrUnreadable or an unreadable finding.
//
// # Projections
//
// A ledger opened with Projections folds each committed entry into their
// p.<name> buckets in the transaction that appends it; p._state records
// how far each is folded, its version and its state root (a digest of the
// bucket kept as it changes). Checkpoint appends a ledger.checkpoint entry
// holding the roots, taken through the entry just before it (the last
// commit's, with what is queued since folded in memory; nothing comes
// between). RebuildProjections
// drops the buckets and folds every entry again in one pass, reading the
// next batch while one folds, and compares the roots at each checkpoint:
// the buckets come out byte-identical, and a fold that differs from the
// one the engine ran is caught where it first differs.
package ledger
