//go:build ignore

// Proofcheck checks an opx inclusion proof (the output of
// `opx ledger prove SEQ --json`) with the Go standard library only: it
// imports nothing from opx, so a third party can read all of it in a few
// minutes and run it against opx's claims.
//
//	go run proofcheck.go -key 'NAME+HASH+KEY' PROOF.json   (or - for stdin)
//	go run proofcheck.go -key ledger.vkey PROOF.json        (a file holding the key)
//
// It checks, in order:
//   - the verifier key (C2SP signed-note: NAME+HASH+base64(0x01 || Ed25519
//     public key), HASH being the first 4 bytes of SHA-256(NAME "\n" 0x01 key));
//   - the note's Ed25519 signature by that key over the note text (a
//     signature line "— NAME base64(keyhash || signature)");
//   - the checkpoint body (C2SP tlog-checkpoint: origin, tree size, base64
//     root hash): its origin must be the key's name (a key signs for the
//     log its name says, and only for it), its size and root the proof's
//     tree_size and root_hash;
//   - the leaf: SHA-256(0x00 || entry bytes), the entry's "seq" being the
//     proof's index;
//   - the RFC 6962 (RFC 9162 section 2.1.3.2) inclusion path from that leaf
//     to the root.
//
// It prints one "ok: ..." line and exits 0 when all hold; otherwise it says
// which check failed and exits 1.
package main

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// maxProof bounds what is read: a proof is a few KiB plus one entry (at
// most 16 MiB).
const maxProof = 32 << 20

type proof struct {
	Index      uint64   `json:"index"`
	TreeSize   uint64   `json:"tree_size"`
	RootHash   string   `json:"root_hash"`
	Hashes     []string `json:"hashes"`
	Entry      string   `json:"entry"`
	Checkpoint string   `json:"checkpoint"`
}

func main() {
	key := flag.String("key", "", "verifier key NAME+HASH+KEY (from `opx ledger key`, saved elsewhere), or a file holding it")
	flag.Parse()
	if *key == "" || flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: go run proofcheck.go -key NAME+HASH+KEY|KEYFILE PROOF.json")
		os.Exit(2)
	}
	k, err := readKey(*key)
	var msg string
	if err == nil {
		msg, err = check(k, flag.Arg(0))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "proofcheck:", err)
		os.Exit(1)
	}
	fmt.Println("ok:", msg)
}

// maxKeyFile bounds a key file: a verifier key is under 1 KiB.
const maxKeyFile = 4 << 10

// readKey returns the key given: the string itself when it has the form
// NAME+HASH+KEY, else the first line of the file it names (as `opx ledger
// key > FILE` saved it), read bounded.
func readKey(arg string) (string, error) {
	if _, _, _, err := parseKey(arg); err == nil {
		return arg, nil
	}
	// Stat first: opening a FIFO or a device could block or never end.
	fi, err := os.Stat(arg)
	if err != nil {
		if _, _, _, kerr := parseKey(arg); errors.Is(err, os.ErrNotExist) && strings.Contains(arg, "+") {
			return "", kerr // meant as a key: say what is wrong with it
		}
		return "", fmt.Errorf("key: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("key file %s is not a regular file", arg)
	}
	f, err := os.Open(arg)
	if err != nil {
		return "", fmt.Errorf("key: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	if err != nil {
		return "", fmt.Errorf("key file %s: %w", arg, err)
	}
	if len(b) > maxKeyFile {
		return "", fmt.Errorf("key file %s is larger than %d bytes: not a verifier key", arg, maxKeyFile)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return strings.TrimSpace(line), nil
}

func check(key, path string) (string, error) {
	var r io.Reader = os.Stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return "", err
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, maxProof+1))
	if err != nil {
		return "", err
	}
	if len(b) > maxProof {
		return "", errors.New("proof is larger than 32 MiB")
	}
	var p proof
	if err := json.Unmarshal(b, &p); err != nil {
		return "", fmt.Errorf("proof is not JSON: %w", err)
	}
	name, pub, kh, err := parseKey(key)
	if err != nil {
		return "", err
	}
	text, err := checkSignature(p.Checkpoint, name, pub, kh)
	if err != nil {
		return "", err
	}
	origin, size, root, err := parseCheckpoint(text)
	if err != nil {
		return "", err
	}
	if origin != name {
		return "", fmt.Errorf("the checkpoint's origin %q is not the key's name %q", origin, name)
	}
	if size != p.TreeSize {
		return "", fmt.Errorf("the signed checkpoint is tree %d, the proof claims %d", size, p.TreeSize)
	}
	if r := base64.StdEncoding.EncodeToString(root); r != p.RootHash {
		return "", fmt.Errorf("the signed checkpoint has root %s, the proof claims %s", r, p.RootHash)
	}
	var e struct {
		Seq *uint64 `json:"seq"`
	}
	if err := json.Unmarshal([]byte(p.Entry), &e); err != nil || e.Seq == nil {
		return "", errors.New("entry is not a JSON object with a seq")
	}
	if *e.Seq != p.Index {
		return "", fmt.Errorf("entry has seq %d, the proof is for leaf %d", *e.Seq, p.Index)
	}
	leaf := sha256.Sum256(append([]byte{0}, p.Entry...))
	steps := make([][]byte, len(p.Hashes))
	for i, h := range p.Hashes {
		if steps[i], err = base64.StdEncoding.DecodeString(h); err != nil || len(steps[i]) != 32 {
			return "", fmt.Errorf("hashes[%d] is not a base64 SHA-256 hash", i)
		}
	}
	got, err := rootFromPath(p.Index, size, leaf[:], steps)
	if err != nil {
		return "", err
	}
	if !bytes.Equal(got, root) {
		return "", fmt.Errorf("the path leads to root %s, the checkpoint's root is %s",
			base64.StdEncoding.EncodeToString(got), base64.StdEncoding.EncodeToString(root))
	}
	return fmt.Sprintf("entry %d (leaf %x) is in tree %d of %s, root %s, signed by %s",
		p.Index, leaf, size, origin, base64.StdEncoding.EncodeToString(root), name), nil
}

// parseKey parses a C2SP signed-note verifier key and checks its key hash.
func parseKey(key string) (name string, pub ed25519.PublicKey, kh []byte, err error) {
	parts := strings.SplitN(key, "+", 3) // the key's base64 may hold a "+"
	if len(parts) != 3 || parts[0] == "" {
		return "", nil, nil, errors.New("key is not NAME+HASH+KEY")
	}
	raw, err := base64.StdEncoding.DecodeString(parts[2])
	if err != nil || len(raw) != 1+ed25519.PublicKeySize || raw[0] != 0x01 {
		return "", nil, nil, errors.New("key is not an Ed25519 verifier key (base64 of 0x01 and 32 bytes)")
	}
	kh, err = hex.DecodeString(parts[1])
	if err != nil || len(kh) != 4 {
		return "", nil, nil, errors.New("key hash is not 8 hex digits")
	}
	sum := sha256.Sum256(append([]byte(parts[0]+"\n"), raw...))
	if !bytes.Equal(sum[:4], kh) {
		return "", nil, nil, errors.New("key hash does not match the key")
	}
	return parts[0], raw[1:], kh, nil
}

// checkSignature finds the signature line of key name in a signed note and
// checks it over the note's text, which it returns.
func checkSignature(note, name string, pub ed25519.PublicKey, kh []byte) (string, error) {
	i := strings.LastIndex(note, "\n\n")
	if i < 0 {
		return "", errors.New("checkpoint is not a signed note (no blank line before signatures)")
	}
	text, sigs := note[:i+1], note[i+2:]
	found := false
	for _, line := range strings.Split(strings.TrimSuffix(sigs, "\n"), "\n") {
		rest, ok := strings.CutPrefix(line, "\u2014 "+name+" ")
		if !ok {
			continue
		}
		sig, err := base64.StdEncoding.DecodeString(rest)
		if err != nil || len(sig) != 4+ed25519.SignatureSize || !bytes.Equal(sig[:4], kh) {
			continue
		}
		if !ed25519.Verify(pub, []byte(text), sig[4:]) {
			return "", fmt.Errorf("the signature by %s does not verify", name)
		}
		found = true
	}
	if !found {
		return "", fmt.Errorf("the checkpoint carries no signature by %s", name)
	}
	return text, nil
}

// parseCheckpoint reads a C2SP tlog-checkpoint body.
func parseCheckpoint(text string) (origin string, size uint64, root []byte, err error) {
	lines := strings.Split(text, "\n")
	if len(lines) < 4 {
		return "", 0, nil, errors.New("checkpoint has fewer than three lines")
	}
	size, err = strconv.ParseUint(lines[1], 10, 64)
	if err != nil || strconv.FormatUint(size, 10) != lines[1] {
		return "", 0, nil, fmt.Errorf("checkpoint size %q is not a decimal number", lines[1])
	}
	root, err = base64.StdEncoding.DecodeString(lines[2])
	if err != nil || len(root) != 32 {
		return "", 0, nil, fmt.Errorf("checkpoint root %q is not a base64 SHA-256 hash", lines[2])
	}
	return lines[0], size, root, nil
}

// rootFromPath computes the root of a tree of size leaves from leaf index's
// hash and its inclusion path (RFC 9162 section 2.1.3.2).
func rootFromPath(index, size uint64, leaf []byte, path [][]byte) ([]byte, error) {
	if index >= size {
		return nil, fmt.Errorf("leaf %d is outside a tree of %d", index, size)
	}
	node := func(l, r []byte) []byte {
		h := sha256.Sum256(append(append([]byte{1}, l...), r...))
		return h[:]
	}
	fn, sn, r := index, size-1, leaf
	for _, p := range path {
		if sn == 0 {
			return nil, errors.New("inclusion path is too long")
		}
		if fn&1 == 1 || fn == sn {
			r = node(p, r)
			for fn&1 == 0 && fn != 0 {
				fn >>= 1
				sn >>= 1
			}
		} else {
			r = node(r, p)
		}
		fn >>= 1
		sn >>= 1
	}
	if sn != 0 {
		return nil, errors.New("inclusion path is too short")
	}
	return r, nil
}
