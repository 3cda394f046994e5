package cli_test

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/opx-dev/opx/cli"
	"github.com/opx-dev/opx/ledger/tlog"
	"github.com/transparency-dev/merkle/rfc6962"
	"github.com/transparency-dev/merkle/testonly"
)

// refProof writes the inclusion proof of entry index in a reference tree
// (transparency-dev/merkle's) of size entries, signed by a new key, and
// returns the file and the key.
func refProof(t *testing.T, index, size uint64, change func(p *tlog.Proof)) (string, tlog.Verifier) {
	t.Helper()
	skey, _, err := tlog.GenerateKey(tlog.Origin("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := tlog.NewSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	tree := testonly.New(rfc6962.DefaultHasher)
	var entries [][]byte
	for i := uint64(0); i < size; i++ {
		e := []byte(fmt.Sprintf(`{"data":{"text":"entry %d"},"prev":"%064d","seq":%d,"session":"","ts":"2026-11-25T10:00:00Z","type":"ledger.note"}`, i, i, i))
		entries = append(entries, e)
		tree.AppendData(e)
	}
	var root [32]byte
	copy(root[:], tree.Hash())
	note, err := s.Sign(size, root)
	if err != nil {
		t.Fatal(err)
	}
	hashes, err := tree.InclusionProof(index, size)
	if err != nil {
		t.Fatal(err)
	}
	p := tlog.NewProof(index, entries[index], tlog.Checkpoint{Size: size, Root: root}, note, hashes)
	if change != nil {
		change(p)
	}
	b, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "proof.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path, s.Verifier()
}

func TestLedgerVerifyProof_OK(t *testing.T) {
	path, key := refProof(t, 5, 21, nil)
	r := run(t, "ledger", "verify-proof", path, "--key", key.String())
	r.wantCode(t, cli.ExitOK)
	r.wantOut(t, "ok: entry 5 is in the tree of 21 entries of opx.local/ledger/", key.String())
	// The key from a file, as `opx ledger key > FILE` saves it.
	kf := filepath.Join(t.TempDir(), "ledger.vkey")
	if err := os.WriteFile(kf, []byte(key.String()+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = run(t, "ledger", "verify-proof", "--json", path, "--key", kf)
	r.wantCode(t, cli.ExitOK)
	m := r.jsonObject(t)
	if m["ok"] != true || m["index"] != jsonNumber("5") || m["tree_size"] != jsonNumber("21") || m["origin"] != key.Name() {
		t.Errorf("--json: %v", m)
	}
}

// TestLedgerVerifyProof_Tampered: each change to a proof, or another key,
// exits 4 and says why.
func TestLedgerVerifyProof_Tampered(t *testing.T) {
	flip := func(s string) string {
		b, _ := base64.StdEncoding.DecodeString(s)
		b[31] ^= 0x80
		return base64.StdEncoding.EncodeToString(b)
	}
	_, other := refProof(t, 0, 1, nil)
	tests := []struct {
		name   string
		change func(p *tlog.Proof)
		other  bool
		says   string
	}{
		{"one hash changed", func(p *tlog.Proof) { p.Hashes[1] = flip(p.Hashes[1]) }, false, "proof does not verify"},
		{"entry bytes changed", func(p *tlog.Proof) { p.Entry = strings.Replace(p.Entry, "entry 5", "entry 6", 1) }, false, "is not in tree"},
		{"tree_size changed", func(p *tlog.Proof) { p.TreeSize = 20 }, false, "the proof claims tree 20"},
		{"root_hash changed", func(p *tlog.Proof) { p.RootHash = flip(p.RootHash) }, false, "proof does not verify"},
		{"checkpoint body changed", func(p *tlog.Proof) { p.Checkpoint = strings.Replace(p.Checkpoint, "\n21\n", "\n22\n", 1) }, false, "not signed by the key"},
		{"another key", nil, true, "not signed by the key"},
		{"malformed", func(p *tlog.Proof) { p.Hashes = append(p.Hashes, "AAAA") }, false, "malformed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, key := refProof(t, 5, 21, tt.change)
			if tt.other {
				key = other
			}
			r := run(t, "ledger", "verify-proof", path, "--key", key.String())
			r.wantCode(t, cli.ExitIntegrity)
			r.wantErr(t, tt.says)
			if strings.Count(r.stderr, "\n") != 1 || rawBytes.MatchString(r.stderr) {
				t.Errorf("not one line with hex:\n%s", r.stderr)
			}
			r = run(t, "ledger", "verify-proof", "--json", path, "--key", key.String())
			r.wantCode(t, cli.ExitIntegrity)
			if m := r.jsonObject(t); m["ok"] != false || !strings.Contains(fmt.Sprint(m["error"]), tt.says) {
				t.Errorf("--json: %v", m)
			}
		})
	}
}

// TestLedgerVerifyProof_Refusals: what is not a proof to check, or no key
// to check it with, is an operational or usage error, never a crash.
func TestLedgerVerifyProof_Refusals(t *testing.T) {
	path, key := refProof(t, 0, 3, nil)
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.json")
	os.WriteFile(garbage, []byte("\x00\xffnot json"), 0o644)
	big := filepath.Join(dir, "big.json")
	f, _ := os.Create(big)
	f.Truncate(tlog.MaxProofBytes + 1)
	f.Close()
	tests := []struct {
		name string
		args []string
		code int
		says string
	}{
		{"no key", []string{path}, cli.ExitUsage, "--key KEY is required"},
		{"bad key", []string{path, "--key", "nonsense"}, cli.ExitUsage, "--key"},
		{"no file", []string{"--key", key.String()}, cli.ExitUsage, "missing PROOF.json"},
		{"missing file", []string{filepath.Join(dir, "nope.json"), "--key", key.String()}, cli.ExitError, "no such file"},
		{"a directory", []string{dir, "--key", key.String()}, cli.ExitError, "not a regular file"},
		{"a device", []string{"/dev/zero", "--key", key.String()}, cli.ExitError, "not a regular file"},
		{"too large", []string{big, "--key", key.String()}, cli.ExitError, "file too large"},
		{"garbage", []string{garbage, "--key", key.String()}, cli.ExitIntegrity, "malformed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, append([]string{"ledger", "verify-proof"}, tt.args...)...)
			r.wantCode(t, tt.code)
			r.wantErr(t, tt.says)
		})
	}

}

// rawBytes matches a byte slice printed with %v: [162 44 226 ...].
var rawBytes = regexp.MustCompile(`\[\d+ \d+ \d+`)
