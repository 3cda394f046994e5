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
// # Merkle tree (an extension of opx-ledger/1)
//
// Beside the BLAKE3 chain (unchanged, still what the format rests on),
// the ledger keeps an RFC 6962 Merkle tree over its entries: SHA-256,
// leaf i is the stored bytes of entry seq i, so its leaf hash is
// SHA-256(0x00 || entry bytes) and an interior node SHA-256(0x01 || left
// || right). Its tree head at size n is the root over entries 0..n-1;
// inclusion and consistency proofs are RFC 6962's (in
// github.com/transparency-dev/merkle's node order), so any RFC 6962
// verifier checks them. A reader that does not know the tree ignores it:
// the extension adds a bucket, a meta key and entry fields, and changes
// nothing an older reader checks.
//
// Bucket "tree" holds the tree in the C2SP tlog-tiles layout. The tile at
// level L and index N holds the hashes of the nodes at height 8L with
// indices 256N..256N+255 (level 0: the leaf hashes), concatenated, 32
// bytes each: its width is len/32, 256 for a full tile. The key is the
// level (one byte) then N (8 bytes big-endian). Full tiles are written
// once and never again; the partial tile at the right edge of each level
// above 0 is rewritten as it grows, and only ever grows. The partial tile
// at the right edge of level 0 is not stored: it is the leaf hashes of
// the last n mod 256 entries, which a reader hashes from the entries (at
// most 255), so a commit of a few entries writes no tile at all (one in
// 256 entries completes a level-0 tile). A tile at width w is the first
// w hashes of the tile (Tile), so a tree below the head is served from
// the same tiles. A node at a height that is not a multiple of 8 is
// hashed up from the at most 128 hashes under it in the tile below. For a
// tree of n entries, level L holds floor(n/256^(L+1)) full tiles and,
// for L > 0 and (n/256^L) mod 256 > 0, one partial tile of that width,
// and nothing else. Meta key "tree" holds "rfc6962-sha256/tlog-tiles"
// once the bucket holds the whole tree.
//
// The tree is written in the transaction that writes the entries (the
// same bbolt commit as the entries, blobs, projections and head), so it
// always covers exactly entries 0..head_seq. The committer hashes the
// leaves before its transaction and joins them into the compact range it
// keeps in memory (the roots of the perfect subtrees of the tree so far,
// at most 64 hashes, and the level-0 edge, rebuilt from the right-edge
// tiles and the last entries on Open), and writes the tiles those nodes
// complete. A proof or a root at any size is a handful of tile reads.
//
// A ledger older than the tree has no meta "tree". Its first writable
// Open builds the tree from the entries, 65536 entries a transaction
// (bounded memory; a build cut short leaves no meta "tree" and starts
// again), sets meta "tree" with the last batch and appends a
// ledger.tree_built entry {tree_size, tree_root}: the tree of the entries
// before it. A read-only open of an older ledger has no tree (ErrNoTree)
// and verifies as before. A ledger with meta "tree" but no bucket, or
// with tiles that do not fit its size, is damage (ErrTreeDamaged, a kind
// of ErrInconsistent): Open for writing refuses it.
//
// ledger.checkpoint gains tree_size, tree_root and note: the tree of the
// entries before the checkpoint (tree_size is the checkpoint's own seq;
// the queued entries are folded in memory, as for the projections),
// tree_root in standard base64 as in a C2SP checkpoint, and, with
// Options.SignCheckpoint, the C2SP signed note of that tree. A ledger
// opened without projections still records the tree in its checkpoints.
//
// Verify recomputes the tree from the entries, the leaves hashed in the
// chunk workers beside the chain, and reports as tree-mismatch: a stored
// hash that differs from the entries' (once: the tiles above a wrong hash
// differ as a consequence and are not reported again), a tile missing,
// cut short, too long or beyond the tree (a stored level-0 edge tile
// too), an unknown key in the bucket,
// and a recorded tree (ledger.checkpoint, ledger.tree_built) whose size is
// not its seq or whose root is not the entries'; a ledger.tree_built
// after the tree was already recorded (the tree was lost), and a bucket or
// meta "tree" gone though entries record the tree. An export carries no
// tiles, but its recorded roots are checked the same way; a segment that
// starts at seq s > 0 needs the compact range [0,s) (Manifest.TreeRange,
// from RangeHashesAt) to compute them, and counts them as unchecked
// (Report.TreeUnchecked) without it. Where the entries are not
// contiguous the tree stops (the chain check says why). For each
// checkpoint whose tree is right, VerifyOptions.CheckCheckpoint may check
// its note (a signature); its refusal is a checkpoint failure.
//
// The tree proves what the chain cannot: that the ledger today extends
// one a third party saw (a consistency proof from a saved checkpoint) and
// that an entry is in it (an inclusion proof). A forger who owns the file
// can rewrite entries, chain, tiles and the roots checkpoints record
// alike; only a checkpoint kept or signed elsewhere stops them.
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
//   - The tree bucket holds exactly the stored tiles of the tree of
//     entries 0..head_seq (when meta "tree" is set); entries and tiles
//     are written in the same transaction.
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
//
// # Exports and their proofs
//
// A segment's manifest carries tree_range, the compact range of the tree
// before its first entry, so the roots recorded inside it are recomputed.
// When the ledger signs checkpoints, every export's manifest also carries
// the latest signed checkpoint note, the verifier key recorded before it
// (ledger.key), and RFC 6962 inclusion proofs of the first exported entry
// and of the last one the checkpoint covers. With the chain between them
// they prove each exported entry up to there to be the entry at its seq
// in the signed tree: a segment proves its place in the full ledger.
// Verification takes the bundled key unless the verifier pins one
// (VerifyOptions.CheckpointKey); the bundled key proves only that the
// export agrees with its own bundle. An export through a Source that is
// not the file computes the same material from the entries it is handed
// and refuses entries that do not hash to the signed root. ExportTiles
// writes the signed tree as a static C2SP tlog-tiles directory.
//
// # Reviewing without reading everything
//
// A Review (opx replay, opx report) reads the ledger once for the view it
// builds, noting the signed checkpoints, the keys and the entries the
// cross-entry rules read from every session. Verify then checks the
// latest signed checkpoint (signature by the key recorded before it, or a
// pinned one; its recorded tree fields), proves every shown entry and
// every entry of the session's span against it (the span by the chain
// down from its last entry, whose inclusion is proved; the others each by
// an inclusion proof), runs the strict checks on them (the causality
// rules on the shown entries and the noted rule entries, which are all
// the context those rules read), and checks every entry after the
// checkpoint in full (chain from the proved entry before it, head,
// stored tiles, payloads, blobs). The entries it neither shows nor needs
// are read (the one pass that builds the view and notes what Verify needs
// goes through every entry) but not checked; Ledger.Verify checks them
// all.
package ledger
