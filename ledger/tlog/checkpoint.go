package tlog

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/transparency-dev/formats/log"
	"golang.org/x/mod/sumdb/note"
)

// OriginPrefix starts every opx ledger's origin; the ledger id follows.
const OriginPrefix = "opx.local/ledger/"

// Bounds on outside input.
const (
	// MaxNoteBytes bounds a signed checkpoint note: the three body lines
	// and up to a hundred signature lines (note.Open's own limit) fit in
	// far less.
	MaxNoteBytes = 64 << 10
	// MaxVerifierKeyBytes bounds a verifier key string.
	MaxVerifierKeyBytes = 1024
)

// Origin is the checkpoint origin (and key name) of the ledger with id
// ledgerID.
func Origin(ledgerID string) string { return OriginPrefix + ledgerID }

// Checkpoint is a verified checkpoint: the tree of the first Size entries
// of the ledger named by Origin has root Root.
type Checkpoint struct {
	Origin string
	Size   uint64
	Root   [32]byte
}

// RootString is the root as a note holds it: base64 (standard encoding).
func (c Checkpoint) RootString() string { return base64.StdEncoding.EncodeToString(c.Root[:]) }

// Verifier checks checkpoints of one key.
type Verifier struct {
	v   note.Verifier
	key string
}

// ParseVerifierKey parses a verifier key in the note format,
// "<name>+<hash>+<key>" (Ed25519). Surrounding white space is ignored, so
// a key copied with its newline works.
func ParseVerifierKey(s string) (Verifier, error) {
	s = strings.TrimSpace(s)
	if len(s) > MaxVerifierKeyBytes {
		return Verifier{}, fmt.Errorf("verifier key: %w: %d bytes (at most %d)", ErrMalformed, len(s), MaxVerifierKeyBytes)
	}
	v, err := note.NewVerifier(s)
	if err != nil {
		return Verifier{}, fmt.Errorf("verifier key %q: %w: %v (want <name>+<hash>+<key>, as `opx ledger key` prints)", clip(s), ErrMalformed, err)
	}
	return Verifier{v: v, key: s}, nil
}

// Name is the key's name: the origin of the ledger it signs for.
func (v Verifier) Name() string { return v.v.Name() }

// String is the verifier key in the note format.
func (v Verifier) String() string { return v.key }

// Open checks a signed checkpoint note against v and returns what it
// says. The note must carry a valid signature of v (other signatures, a
// witness's cosignature, are allowed and ignored) and its origin must be
// v's name. Parsing and the signature check are
// transparency-dev/formats/log.ParseCheckpoint's. A checkpoint of tree
// size 0 is malformed: opx never signs the empty tree, and every tree
// extends it, so such a note would pin nothing.
func Open(text []byte, v Verifier) (Checkpoint, error) {
	if v.v == nil {
		return Checkpoint{}, errors.New("open checkpoint: no verifier key")
	}
	if len(text) > MaxNoteBytes {
		return Checkpoint{}, fmt.Errorf("checkpoint: %w: %d bytes (at most %d)", ErrMalformed, len(text), MaxNoteBytes)
	}
	cp, _, _, err := log.ParseCheckpoint(text, v.Name(), v.v)
	if err != nil {
		return Checkpoint{}, classify(text, v, err)
	}
	if len(cp.Hash) != 32 {
		return Checkpoint{}, fmt.Errorf("checkpoint: %w: root hash of %d bytes, want 32", ErrMalformed, len(cp.Hash))
	}
	if cp.Size == 0 {
		return Checkpoint{}, fmt.Errorf("checkpoint: %w: tree size 0 (opx never signs the empty tree; a checkpoint of it pins nothing)", ErrMalformed)
	}
	c := Checkpoint{Origin: cp.Origin, Size: cp.Size}
	copy(c.Root[:], cp.Hash)
	return c, nil
}

// classify turns ParseCheckpoint's error (which it does not wrap) into
// ours: a note without a valid signature of v is ErrUnsigned, anything
// else (not a note at all; signed by v but not a checkpoint of v's
// origin) is ErrMalformed.
func classify(text []byte, v Verifier, err error) error {
	_, oerr := note.Open(text, note.VerifierList(v.v))
	var unverified *note.UnverifiedNoteError
	var invalid *note.InvalidSignatureError
	switch {
	case errors.As(oerr, &unverified), errors.As(oerr, &invalid):
		return fmt.Errorf("checkpoint: %w %s (%v)", ErrUnsigned, v.key, oerr)
	case oerr != nil:
		return fmt.Errorf("checkpoint: %w: not a signed note (%v)", ErrMalformed, oerr)
	default:
		return fmt.Errorf("checkpoint: %w: %v", ErrMalformed, err)
	}
}

// clip shortens s for an error message.
func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}
