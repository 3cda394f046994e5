// Package tlog is the ledger seen from outside, in the transparency-log
// world's public formats: C2SP tlog-checkpoints signed as C2SP
// signed-notes (Ed25519), the ledger's signing key, and the inclusion
// proofs `opx ledger prove` writes and anyone can check offline.
//
// It is pure: it knows tree sizes, roots, notes and keys, never a ledger
// file (it does not import package ledger), so an exported proof can be
// checked with it alone, and the export and the CLI share one verifier.
//
// # Checkpoints
//
// A ledger's checkpoint names it by its origin, "opx.local/ledger/<ledger
// id>", and is the C2SP tlog-checkpoint body
//
//	opx.local/ledger/<ledger id>
//	<tree size, decimal>
//	<root hash, base64 std>
//
// followed by a blank line and one Ed25519 signature line per signer
// (golang.org/x/mod/sumdb/note). The key's name is the origin, so a
// verifier key, "<origin>+<hash>+<key>", says which ledger it signs for.
// Checkpoints are parsed and checked by
// github.com/transparency-dev/formats/log.ParseCheckpoint, not by a
// parser of our own, and a checkpoint is trusted only when it carries a
// valid signature of the expected key and its origin is the key's name.
//
// # The signing key
//
// The key lives in the file "checkpoint.key" (KeyFile) beside ledger.db in
// the state directory, never in the workspace: mode 0600, owned by the
// user the engine runs as. LoadKey refuses a key file that group or others
// may read or write, one owned by someone else, and anything that is not
// a regular file, before a byte of it is read, and reads at most
// MaxKeyFileBytes. The key is created once, atomically (written to a
// temporary file, fsynced, linked into place without replacing anything).
//
// The key proves nothing against whoever owns the machine: they can read
// it and sign anything. What it gives is that a checkpoint copied
// elsewhere (another machine, a ticket, a witness) pins the ledger as it
// was: every later state must be an append-only extension of it, which a
// consistency proof shows and a rewrite cannot fake.
//
// # Proofs
//
// `opx ledger prove SEQ --json` writes one JSON object (Proof):
//
//	{"index":N,"tree_size":S,"root_hash":"<base64>","hashes":["<base64>",...],
//	 "entry":"<the entry's stored bytes>","checkpoint":"<the signed note>"}
//
// A verifier with the ledger's verifier key checks, without the ledger
// and without opx (Proof.Verify; ledger/testdata has a checker that
// imports nothing of opx): the note carries a valid Ed25519 signature of
// the key and its body is origin, tree_size, root_hash; the leaf hash
// SHA-256(0x00 || entry) and the hashes (RFC 6962 order, from the leaf
// up) lead to root_hash at index in a tree of tree_size leaves
// (transparency-dev/merkle's proof.VerifyInclusion); and the entry's
// "seq" is index. VerifyConsistency checks that one tree extends another
// (verify --since), against roots the caller trusts.
//
// # The witness protocol
//
// witness.go is the wire form of C2SP tlog-witness
// (https://c2sp.org/tlog-witness), shared by the engine (a log asking
// witnesses to cosign) and the collector (a witness): the add-checkpoint
// request body (AddCheckpointRequest: "old N", at most MaxProofLines
// base64 consistency proof hashes, an empty line, the signed checkpoint)
// and the 409 answer's body (FormatSize, ParseSize; ContentTypeSize). The
// codec checks the form only; what each status code means is the
// witness's.
//
// # Reading outside input
//
// A note, a proof file and a key string may come from anywhere. Each is
// read in memory bounded by a constant (MaxNoteBytes, MaxProofBytes,
// MaxVerifierKeyBytes, MaxAddCheckpointBytes), from regular files only, and every malformation
// is an error wrapping ErrMalformed, never a panic.
package tlog
