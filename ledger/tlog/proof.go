package tlog

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/opx-dev/opx/internal/regularfile"
	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
)

// Bounds on a proof.
const (
	// MaxEntryBytes is the largest entry a proof may carry: the ledger's
	// maximum entry size (ledger.MaxLineSize).
	MaxEntryBytes = 16 << 20
	// MaxProofBytes bounds a proof file: the entry, escaped (canonical
	// JSON inside a JSON string at most doubles), plus the note and the
	// hashes.
	MaxProofBytes = 2*MaxEntryBytes + 2*MaxNoteBytes + 64<<10
	// MaxProofHashes bounds a proof's hashes: an inclusion or consistency
	// proof in a tree of at most 2^64 leaves has at most 64 (consistency:
	// a few more at most; we never make one over 64).
	MaxProofHashes = 64
)

// Proof is an inclusion proof of one entry against a signed checkpoint,
// as `opx ledger prove --json` writes it. Hashes are base64 (standard
// encoding, as in the note), in RFC 6962 order (from the leaf up); Entry
// is the entry's stored bytes.
type Proof struct {
	Index      uint64   `json:"index"`
	TreeSize   uint64   `json:"tree_size"`
	RootHash   string   `json:"root_hash"`
	Hashes     []string `json:"hashes"`
	Entry      string   `json:"entry"`
	Checkpoint string   `json:"checkpoint"`
}

// LeafHash is the RFC 6962 leaf hash of an entry's stored bytes:
// SHA-256(0x00 || entry).
func LeafHash(entry []byte) [32]byte {
	var h [32]byte
	copy(h[:], rfc6962.DefaultHasher.HashLeaf(entry))
	return h
}

// EncodeHashes returns hashes in base64 (standard encoding).
func EncodeHashes(hashes [][]byte) []string {
	out := make([]string, len(hashes))
	for i, h := range hashes {
		out[i] = base64.StdEncoding.EncodeToString(h)
	}
	return out
}

// NewProof assembles the proof of entry index (its stored bytes entry)
// against the checkpoint note, whose tree is cp, from the inclusion
// proof's hashes.
func NewProof(index uint64, entry []byte, cp Checkpoint, note string, hashes [][]byte) *Proof {
	return &Proof{Index: index, TreeSize: cp.Size, RootHash: cp.RootString(), Hashes: EncodeHashes(hashes),
		Entry: string(entry), Checkpoint: note}
}

// Marshal returns the proof as JSON, with a final newline. The entry's
// bytes are kept as they are (no HTML escaping), so the file shows them.
func (p *Proof) Marshal() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(p); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// ReadProof reads and parses a proof from the regular file at path, at
// most MaxProofBytes of it.
func ReadProof(path string) (*Proof, error) {
	b, err := regularfile.Read(path, MaxProofBytes)
	if err != nil {
		return nil, fmt.Errorf("proof: %w", err)
	}
	return ParseProof(b)
}

// ParseProof parses a proof. Every field must be there and nothing else:
// unknown fields, trailing data, hashes that are not 32 bytes of base64,
// more than MaxProofHashes of them, a tree_size of 0, an index outside
// the tree or an oversized entry or note are ErrMalformed. It does not check the proof:
// Verify does.
func ParseProof(b []byte) (*Proof, error) {
	if len(b) > MaxProofBytes {
		return nil, fmt.Errorf("proof: %w: %d bytes (at most %d)", ErrMalformed, len(b), MaxProofBytes)
	}
	var raw struct {
		Index      *uint64   `json:"index"`
		TreeSize   *uint64   `json:"tree_size"`
		RootHash   *string   `json:"root_hash"`
		Hashes     *[]string `json:"hashes"`
		Entry      *string   `json:"entry"`
		Checkpoint *string   `json:"checkpoint"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("proof: %w: not the JSON of `opx ledger prove --json`: %v", ErrMalformed, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("proof: %w: data after the proof object", ErrMalformed)
	}
	missing := ""
	switch {
	case raw.Index == nil:
		missing = "index"
	case raw.TreeSize == nil:
		missing = "tree_size"
	case raw.RootHash == nil:
		missing = "root_hash"
	case raw.Hashes == nil:
		missing = "hashes"
	case raw.Entry == nil:
		missing = "entry"
	case raw.Checkpoint == nil:
		missing = "checkpoint"
	}
	if missing != "" {
		return nil, fmt.Errorf("proof: %w: no %q", ErrMalformed, missing)
	}
	p := &Proof{Index: *raw.Index, TreeSize: *raw.TreeSize, RootHash: *raw.RootHash, Hashes: *raw.Hashes,
		Entry: *raw.Entry, Checkpoint: *raw.Checkpoint}
	switch {
	case p.TreeSize == 0:
		return nil, fmt.Errorf("proof: %w: tree_size 0 (opx never signs the empty tree, and no entry is in it)", ErrMalformed)
	case p.Index >= p.TreeSize:
		return nil, fmt.Errorf("proof: %w: index %d is outside a tree of %d entries", ErrMalformed, p.Index, p.TreeSize)
	case len(p.Hashes) > MaxProofHashes:
		return nil, fmt.Errorf("proof: %w: %d hashes (at most %d)", ErrMalformed, len(p.Hashes), MaxProofHashes)
	case len(p.Entry) > MaxEntryBytes:
		return nil, fmt.Errorf("proof: %w: entry of %d bytes (at most %d)", ErrMalformed, len(p.Entry), MaxEntryBytes)
	case len(p.Checkpoint) > MaxNoteBytes:
		return nil, fmt.Errorf("proof: %w: checkpoint of %d bytes (at most %d)", ErrMalformed, len(p.Checkpoint), MaxNoteBytes)
	}
	if _, err := decodeHash("root_hash", p.RootHash); err != nil {
		return nil, err
	}
	if _, err := decodeHashes(p.Hashes); err != nil {
		return nil, err
	}
	return p, nil
}

// Verify checks the proof offline with the verifier key v: the
// checkpoint is signed by v and says tree_size and root_hash; the entry's
// leaf hash, SHA-256(0x00 || entry), is at index in that tree (RFC 6962
// inclusion proof, transparency-dev/merkle's verifier); and the entry
// says it is entry index (its "seq"). It returns the checkpoint.
func (p *Proof) Verify(v Verifier) (Checkpoint, error) {
	cp, err := Open([]byte(p.Checkpoint), v)
	if err != nil {
		return Checkpoint{}, err
	}
	root, err := decodeHash("root_hash", p.RootHash)
	if err != nil {
		return Checkpoint{}, err
	}
	hashes, err := decodeHashes(p.Hashes)
	if err != nil {
		return Checkpoint{}, err
	}
	if cp.Size != p.TreeSize || cp.Root != root {
		return Checkpoint{}, fmt.Errorf("%w: the checkpoint is of tree %d %s, the proof claims tree %d %s",
			ErrProof, cp.Size, cp.RootString(), p.TreeSize, p.RootHash)
	}
	leaf := LeafHash([]byte(p.Entry))
	if err := proof.VerifyInclusion(rfc6962.DefaultHasher, p.Index, p.TreeSize, leaf[:], hashes, root[:]); err != nil {
		return Checkpoint{}, fmt.Errorf("%w: entry %d (leaf hash %x) is not in tree %d %s: %s",
			ErrProof, p.Index, leaf, p.TreeSize, p.RootHash, MerkleReason(err))
	}
	var e struct {
		Seq *uint64 `json:"seq"`
	}
	if err := json.Unmarshal([]byte(p.Entry), &e); err != nil || e.Seq == nil || *e.Seq != p.Index {
		return Checkpoint{}, fmt.Errorf("%w: the entry at index %d does not say seq %d", ErrProof, p.Index, p.Index)
	}
	return cp, nil
}

// VerifyConsistency checks that the tree of size2 entries with root2 is
// an append-only extension of the tree of size1 entries with root1,
// given the RFC 6962 consistency proof hashes.
func VerifyConsistency(size1, size2 uint64, hashes [][]byte, root1, root2 [32]byte) error {
	if len(hashes) > MaxProofHashes {
		return fmt.Errorf("%w: consistency proof of %d hashes", ErrMalformed, len(hashes))
	}
	if err := proof.VerifyConsistency(rfc6962.DefaultHasher, size1, size2, hashes, root1[:], root2[:]); err != nil {
		return fmt.Errorf("%w: tree %d is not an extension of tree %d: %s", ErrProof, size2, size1, MerkleReason(err))
	}
	return nil
}

// MerkleReason says in one line why transparency-dev/merkle refused a
// proof: its RootMismatchError prints both roots as decimal byte arrays
// over four lines, which a reader (and a log line) cannot use.
func MerkleReason(err error) string {
	var m proof.RootMismatchError
	if errors.As(err, &m) {
		return fmt.Sprintf("the hashes lead to root %x, not %x", m.CalculatedRoot, m.ExpectedRoot)
	}
	return strings.ReplaceAll(err.Error(), "\n", " ")
}

func decodeHashes(hs []string) ([][]byte, error) {
	out := make([][]byte, len(hs))
	for i, h := range hs {
		d, err := decodeHash(fmt.Sprintf("hashes[%d]", i), h)
		if err != nil {
			return nil, err
		}
		out[i] = d[:]
	}
	return out, nil
}

func decodeHash(field, s string) ([32]byte, error) {
	var h [32]byte
	d, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(d) != sha256.Size {
		return h, fmt.Errorf("proof: %w: %s is not 32 bytes of base64", ErrMalformed, field)
	}
	copy(h[:], d)
	return h, nil
}
