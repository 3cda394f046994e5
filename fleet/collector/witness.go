package collector

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	tdnote "github.com/transparency-dev/formats/note"

	"github.com/opx-dev/opx/ledger/tlog"
	"golang.org/x/mod/sumdb/note"
)

// WitnessKeyFile is the cosigner's key in the store: a note signer key
// (Ed25519), mode 0600.
const WitnessKeyFile = "witness.key"

// maxKeyFile bounds what is read of the key file.
const maxKeyFile = 4096

var witnessNameRE = regexp.MustCompile(`^[A-Za-z0-9._/-]{1,128}$`)

// Witness is the collector's cosigner.
type Witness struct {
	signer *tdnote.Signer
	// VKey is its verifier key in cosignature/v1 form, as `opx collector
	// key` prints it and `opx ledger verify --witness` takes it.
	VKey string
}

// LoadWitness reads the cosigner key of the store at dir, creating it
// (named name, "opx-collector" by default) when there is none. A key file
// that others may read is refused, not used.
func LoadWitness(dir, name string) (*Witness, error) {
	path := filepath.Join(dir, WitnessKeyFile)
	skey, err := readKeyFile(path)
	if errors.Is(err, os.ErrNotExist) {
		skey, err = createKeyFile(dir, path, name)
	}
	if err != nil {
		return nil, err
	}
	s, err := tdnote.NewSignerForCosignatureV1(skey)
	if err != nil {
		return nil, fmt.Errorf("witness key %s: %w", path, err)
	}
	v, err := vkeyOf(skey)
	if err != nil {
		return nil, fmt.Errorf("witness key %s: %w", path, err)
	}
	cv, err := tdnote.VKeyToCosignatureV1(v)
	if err != nil {
		return nil, fmt.Errorf("witness key %s: %w", path, err)
	}
	return &Witness{signer: s, VKey: cv}, nil
}

// Name is the witness's name in its cosignature lines.
func (w *Witness) Name() string { return w.signer.Name() }

// Cosign adds the witness's cosignature to a checkpoint note signed by
// the source (verified with srcKey).
func (w *Witness) Cosign(text []byte, srcKey tlog.Verifier) ([]byte, error) {
	v, err := note.NewVerifier(srcKey.String())
	if err != nil {
		return nil, err
	}
	n, err := note.Open(text, note.VerifierList(v))
	if err != nil {
		return nil, err
	}
	return note.Sign(n, w.signer)
}

func readKeyFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() || fi.Size() > maxKeyFile {
		return "", fmt.Errorf("witness key %s: not a key file", path)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("witness key %s: mode %o, others may read it: make it 0600 (chmod 600) if it never left this machine, else move it away and a new key is made", path, fi.Mode().Perm())
	}
	b := make([]byte, fi.Size())
	if _, err := f.ReadAt(b, 0); err != nil {
		return "", fmt.Errorf("witness key %s: %w", path, err)
	}
	return strings.TrimSpace(string(b)), nil
}

func createKeyFile(dir, path, name string) (string, error) {
	if name == "" {
		name = "opx-collector"
	}
	if !witnessNameRE.MatchString(name) {
		return "", fmt.Errorf("witness name %q: want 1 to 128 of letters, digits and . _ / -", name)
	}
	skey, _, err := note.GenerateKey(rand.Reader, name)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(dir, ".witness-*.key")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err == nil {
		_, err = tmp.WriteString(skey + "\n")
		if err == nil {
			err = tmp.Sync()
		}
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", err
	}
	// Link, not rename: a key another collector made meanwhile wins.
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, os.ErrExist) {
			return readKeyFile(path)
		}
		return "", err
	}
	return skey, syncDir(dir)
}

// vkeyOf derives the verifier key of a note signer key
// (PRIVATE+KEY+<name>+<hash>+base64(0x01 | Ed25519 seed)).
func vkeyOf(skey string) (string, error) {
	rest, ok := strings.CutPrefix(skey, "PRIVATE+KEY+")
	name, rest, ok2 := strings.Cut(rest, "+")
	_, key, ok3 := strings.Cut(rest, "+")
	if !ok || !ok2 || !ok3 {
		return "", errors.New("not PRIVATE+KEY+<name>+<hash>+<key>")
	}
	k, err := base64.StdEncoding.DecodeString(key)
	if err != nil || len(k) != 1+ed25519.SeedSize || k[0] != 1 {
		return "", errors.New("not an Ed25519 key")
	}
	return note.NewEd25519VerifierKey(name, ed25519.NewKeyFromSeed(k[1:]).Public().(ed25519.PublicKey))
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
