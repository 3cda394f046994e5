package tlog

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/opx-dev/opx/internal/regularfile"
	"github.com/transparency-dev/formats/log"
	"golang.org/x/mod/sumdb/note"
)

// The files tlog keeps in a ledger's state directory, beside ledger.db.
const (
	// KeyFile holds the signing key (mode 0600).
	KeyFile = "checkpoint.key"
	// NoteFile holds the latest signed checkpoint note.
	NoteFile = "checkpoint"
	// MaxKeyFileBytes bounds what LoadKey reads of a key file.
	MaxKeyFileBytes = 4096
)

// Signer signs checkpoints of one ledger.
type Signer struct {
	s        note.Signer
	verifier Verifier
}

// GenerateKey returns a new Ed25519 key pair named origin, in the note
// formats: skey "PRIVATE+KEY+<origin>+<hash>+<key>" and vkey
// "<origin>+<hash>+<key>".
func GenerateKey(origin string) (skey, vkey string, err error) {
	return note.GenerateKey(rand.Reader, origin)
}

// NewSigner returns the signer of skey, a private key in the note format.
func NewSigner(skey string) (*Signer, error) {
	skey = strings.TrimSpace(skey)
	s, err := note.NewSigner(skey)
	if err != nil {
		return nil, fmt.Errorf("signing key: %w: %v", ErrMalformed, err)
	}
	vkey, err := verifierKeyOf(skey)
	if err != nil {
		return nil, err
	}
	v, err := ParseVerifierKey(vkey)
	if err != nil {
		return nil, err
	}
	return &Signer{s: s, verifier: v}, nil
}

// verifierKeyOf derives the verifier key from a private key in the note
// format: PRIVATE+KEY+<name>+<hash>+base64(0x01 | Ed25519 seed).
func verifierKeyOf(skey string) (string, error) {
	// The name holds no '+' and the hash is 8 hex digits; the key's
	// base64 may hold '+', so split from the left.
	rest, ok := strings.CutPrefix(skey, "PRIVATE+KEY+")
	name, rest, ok2 := strings.Cut(rest, "+")
	_, key, ok3 := strings.Cut(rest, "+")
	if !ok || !ok2 || !ok3 {
		return "", fmt.Errorf("signing key: %w: not PRIVATE+KEY+<name>+<hash>+<key>", ErrMalformed)
	}
	k, err := base64.StdEncoding.DecodeString(key)
	if err != nil || len(k) != 1+ed25519.SeedSize || k[0] != 1 {
		return "", fmt.Errorf("signing key: %w: not an Ed25519 key", ErrMalformed)
	}
	pub := ed25519.NewKeyFromSeed(k[1:]).Public().(ed25519.PublicKey)
	return note.NewEd25519VerifierKey(name, pub)
}

// Verifier is the verifier of the signer's key.
func (s *Signer) Verifier() Verifier { return s.verifier }

// Origin is the origin the signer signs for (its key's name).
func (s *Signer) Origin() string { return s.s.Name() }

// Sign returns the signed checkpoint note of the tree of size entries
// with root root.
func (s *Signer) Sign(size uint64, root [32]byte) (string, error) {
	body := log.Checkpoint{Origin: s.Origin(), Size: size, Hash: root[:]}.Marshal()
	b, err := note.Sign(&note.Note{Text: string(body)}, s.s)
	if err != nil {
		return "", fmt.Errorf("sign checkpoint: %w", err)
	}
	return string(b), nil
}

// CreateKey creates a new signing key for origin in dir's KeyFile, mode
// 0600, and returns its signer. The file is written beside its final name,
// fsynced and linked into place, so it is whole or absent, and an existing
// key is never replaced (ErrKeyExists).
func CreateKey(dir, origin string) (*Signer, error) {
	skey, _, err := GenerateKey(origin)
	if err != nil {
		return nil, fmt.Errorf("create checkpoint key: %w", err)
	}
	s, err := NewSigner(skey)
	if err != nil {
		return nil, err
	}
	final := filepath.Join(dir, KeyFile)
	tmp, err := os.CreateTemp(dir, ".checkpoint.key-*") // mode 0600
	if err != nil {
		return nil, fmt.Errorf("create checkpoint key: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.WriteString(skey + "\n")
	if err == nil {
		err = tmp.Chmod(0o600)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Link(tmp.Name(), final)
		if errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("create %s: %w", final, ErrKeyExists)
		}
	}
	if err == nil {
		err = syncDir(dir)
	}
	if err != nil {
		return nil, fmt.Errorf("create checkpoint key: %w", err)
	}
	return s, nil
}

// LoadKey loads the signing key in dir's KeyFile. It refuses, before
// reading a byte, anything but a regular file owned by this process's
// user with no permission bits for group or others (ErrKeyInsecure), and
// reads at most MaxKeyFileBytes. A missing file is ErrNoKey.
func LoadKey(dir string) (*Signer, error) {
	path := filepath.Join(dir, KeyFile)
	f, err := regularfile.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", path, ErrNoKey)
	}
	if err != nil {
		return nil, fmt.Errorf("checkpoint key: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("checkpoint key: %w", err)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("%s: %w: mode %04o lets group or others in; it must be 0600 (chmod 600 %s)", path, ErrKeyInsecure, perm, path)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return nil, fmt.Errorf("%s: %w: owned by uid %d, not by this user (uid %d)", path, ErrKeyInsecure, st.Uid, os.Geteuid())
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxKeyFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(b) > MaxKeyFileBytes {
		return nil, fmt.Errorf("%s: %w: more than %d bytes", path, ErrMalformed, MaxKeyFileBytes)
	}
	s, err := NewSigner(string(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// syncDir fsyncs a directory, so a file linked or renamed into it stays.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
