package ledger_test

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/tlog"
	"github.com/transparency-dev/merkle/rfc6962"
	"github.com/transparency-dev/merkle/testonly"
	sumnote "golang.org/x/mod/sumdb/note"
)

// outsideProof is the JSON of `opx ledger prove SEQ --json`, as an outside
// checker reads it.
type outsideProof struct {
	Index      uint64   `json:"index"`
	TreeSize   uint64   `json:"tree_size"`
	RootHash   string   `json:"root_hash"`
	Hashes     []string `json:"hashes"`
	Entry      string   `json:"entry"`
	Checkpoint string   `json:"checkpoint"`
}

// The proofcheck program, built once per test binary (TestMain removes
// proofcheckDir).
var (
	proofcheckOnce sync.Once
	proofcheckDir  string
	proofcheckBin  string
	proofcheckErr  error
)

// proofCheckers builds testdata/proofcheck (standard library only, no opx
// import) and returns the two outside checkers of an inclusion proof:
// that program and testdata/verify-proof.sh (jq, openssl, sha256sum,
// base64, od). Each returns its combined output and error.
func proofCheckers(t *testing.T) map[string]func(proofPath, key string) (string, error) {
	t.Helper()
	needTools(t, "bash", "jq", "openssl", "sha256sum", "base64", "od")
	src, err := filepath.Abs("testdata/proofcheck/proofcheck.go")
	if err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs("testdata/verify-proof.sh")
	if err != nil {
		t.Fatal(err)
	}
	proofcheckOnce.Do(func() {
		// Built once for the package's three users, outside the module,
		// so that nothing of opx can be linked in.
		if proofcheckDir, proofcheckErr = os.MkdirTemp("", "opx-proofcheck-"); proofcheckErr != nil {
			return
		}
		proofcheckBin = filepath.Join(proofcheckDir, "proofcheck")
		build := exec.Command("go", "build", "-o", proofcheckBin, src)
		build.Dir = proofcheckDir
		build.Env = append(os.Environ(), "GO111MODULE=off", "GOFLAGS=")
		if out, err := build.CombinedOutput(); err != nil {
			proofcheckErr = fmt.Errorf("build proofcheck: %v\n%s", err, out)
		}
	})
	if proofcheckErr != nil {
		t.Fatal(proofcheckErr)
	}
	bin := proofcheckBin
	return map[string]func(string, string) (string, error){
		"proofcheck": func(p, key string) (string, error) {
			out, err := exec.Command(bin, "-key", key, p).CombinedOutput()
			return string(out), err
		},
		"verify-proof.sh": func(p, key string) (string, error) {
			out, err := exec.Command("bash", script, p, key).CombinedOutput()
			return string(out), err
		},
	}
}

// checkOutside runs every outside checker on proof and checks that each
// accepts it (want "") or refuses it saying want.
func checkOutside(t *testing.T, checkers map[string]func(string, string) (string, error), proof []byte, key, want string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "proof.json")
	if err := os.WriteFile(p, proof, 0o600); err != nil {
		t.Fatal(err)
	}
	for name, run := range checkers {
		out, err := run(p, key)
		if want == "" {
			if err != nil || !strings.HasPrefix(out, "ok: ") {
				t.Errorf("%s refused a good proof: %v\n%s", name, err, out)
			}
			continue
		}
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(out, want) {
			t.Errorf("%s: %v, want exit 1 saying %q\n%s", name, err, want, out)
		}
	}
}

// tamperProofCases are the ways a proof can lie, each with what an outside
// checker must say. mut changes a decoded copy of a good proof; otherKey
// is a second verifier key, another ledger's.
func tamperProofCases(otherKey string) []struct {
	name string
	mut  func(p *outsideProof) string // returns the key to check with ("" = the ledger's)
	want string
} {
	flip := func(s string) string {
		b, _ := base64.StdEncoding.DecodeString(s)
		b[7] ^= 1
		return base64.StdEncoding.EncodeToString(b)
	}
	return []struct {
		name string
		mut  func(p *outsideProof) string
		want string
	}{
		{"one path hash changed", func(p *outsideProof) string { p.Hashes[0] = flip(p.Hashes[0]); return "" }, "the path leads to root"},
		{"a path hash dropped", func(p *outsideProof) string { p.Hashes = p.Hashes[1:]; return "" }, "inclusion path is too short"},
		{"entry changed", func(p *outsideProof) string { p.Entry = strings.Replace(p.Entry, `"seq":`, `"seq": `, 1); return "" }, "the path leads to root"},
		{"entry of another seq", func(p *outsideProof) string { p.Index++; return "" }, "entry has seq"},
		{"root claimed differently", func(p *outsideProof) string { p.RootHash = flip(p.RootHash); return "" }, "the signed checkpoint has root"},
		{"bigger tree claimed", func(p *outsideProof) string { p.TreeSize++; return "" }, "the signed checkpoint is tree"},
		{"checkpoint text changed", func(p *outsideProof) string {
			p.Checkpoint = strings.Replace(p.Checkpoint, "\n"+fmt.Sprint(p.TreeSize)+"\n", "\n"+fmt.Sprint(p.TreeSize+1)+"\n", 1)
			return ""
		}, "does not verify"},
		{"signed by another key", func(p *outsideProof) string { return otherKey }, "carries no signature by"},
		{"re-signed by a key named otherwise", func(p *outsideProof) string {
			// A valid signature by a key that signs for another log: the
			// origin is not the key's name, so it vouches for nothing here.
			skey, vkey, err := sumnote.GenerateKey(rand.Reader, "opx.local/ledger/ffffffffffffffffffffffffffffffff")
			if err != nil {
				panic(err)
			}
			s, err := sumnote.NewSigner(skey)
			if err != nil {
				panic(err)
			}
			body, _, _ := strings.Cut(p.Checkpoint, "\n\n")
			msg, err := sumnote.Sign(&sumnote.Note{Text: body + "\n"}, s)
			if err != nil {
				panic(err)
			}
			p.Checkpoint = string(msg)
			return vkey
		}, "is not the key's name"},
	}
}

// signNote signs a C2SP checkpoint (origin, size, base64 root) with skey.
func signNote(t *testing.T, skey, origin string, size uint64, root []byte) string {
	t.Helper()
	s, err := sumnote.NewSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := sumnote.Sign(&sumnote.Note{Text: fmt.Sprintf("%s\n%d\n%s\n", origin, size, base64.StdEncoding.EncodeToString(root))}, s)
	if err != nil {
		t.Fatal(err)
	}
	return string(msg)
}

// TestProofCheck_Standalone checks the outside checkers on proofs built
// with transparency-dev/merkle's reference tree and x/mod's note signer (no
// opx code): each accepts every leaf of trees of every shape up to 9 and
// refuses each lie. The same checkers run on `opx ledger prove --json`
// output in the cli tests.
func TestProofCheck_Standalone(t *testing.T) {
	t.Parallel() // outside processes in its own directories, nothing shared
	checkers := proofCheckers(t)
	origin := "opx.local/ledger/0123456789abcdef0123456789abcdef"
	// A key whose base64 holds a "+", which a naive split of
	// NAME+HASH+KEY gets wrong.
	var skey, vkey string
	for !strings.Contains(strings.TrimPrefix(vkey, origin+"+"), "+") || strings.Count(vkey, "+") < 3 {
		var err error
		if skey, vkey, err = sumnote.GenerateKey(rand.Reader, origin); err != nil {
			t.Fatal(err)
		}
	}
	_, otherKey, _ := sumnote.GenerateKey(rand.Reader, origin)
	var entries []string
	for i := 0; i < 9; i++ {
		entries = append(entries, fmt.Sprintf(`{"data":{"n":%d,"t":"café \"q\""},"prev":"%s","seq":%d,"session":"s","ts":"2026-01-01T00:00:00Z","type":"ledger.note"}`, i, strings.Repeat("0", 64), i))
	}
	var good []byte
	for size := 1; size <= len(entries); size++ {
		for index := 0; index < size; index += max(1, size/3) {
			p := refProof(t, entries[:size], uint64(index))
			p.Checkpoint = signNote(t, skey, origin, p.TreeSize, mustB64(p.RootHash))
			b, _ := json.Marshal(p)
			checkOutside(t, checkers, b, vkey, "")
			if size == len(entries) && index == 3 {
				good = b
			}
		}
	}
	for _, tc := range tamperProofCases(otherKey) {
		t.Run(tc.name, func(t *testing.T) {
			var p outsideProof
			json.Unmarshal(good, &p)
			key := tc.mut(&p)
			if key == "" {
				key = vkey
			}
			b, _ := json.Marshal(p)
			checkOutside(t, checkers, b, key, tc.want)
		})
	}
}

// TestProofCheck_KeyFile: both outside checkers take the verifier key as
// the string `opx ledger key` prints or as a file holding it (as the
// README saves it, with its newline), and refuse what is neither with
// one clear line.
func TestProofCheck_KeyFile(t *testing.T) {
	t.Parallel() // outside processes in its own directories, nothing shared
	checkers := proofCheckers(t)
	origin := "opx.local/ledger/0123456789abcdef0123456789abcdef"
	skey, vkey, err := sumnote.GenerateKey(rand.Reader, origin)
	if err != nil {
		t.Fatal(err)
	}
	_, otherKey, _ := sumnote.GenerateKey(rand.Reader, origin)
	entries := []string{`{"seq":0}`, `{"seq":1}`, `{"seq":2}`}
	p := refProof(t, entries, 1)
	p.Checkpoint = signNote(t, skey, origin, p.TreeSize, mustB64(p.RootHash))
	proof, _ := json.Marshal(p)
	dir := t.TempDir()
	file := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	tests := []struct {
		name, key, want string // want "": accepted
	}{
		{"the key string", vkey, ""},
		{"a file as opx ledger key > FILE writes it", file("ledger.vkey", vkey+"\n"), ""},
		{"a file with CRLF and spaces", file("crlf.vkey", "  "+vkey+"\r\n"), ""},
		{"a file holding another key", file("other.vkey", otherKey+"\n"), "carries no signature by"},
		{"an empty file", file("empty.vkey", ""), "key is not"},
		{"a file of garbage", file("garbage.vkey", "\x00\xff"+strings.Repeat("x", 8<<10)), "key"},
		{"a missing file", filepath.Join(dir, "missing.vkey"), "missing.vkey"},
		{"a directory", dir, "not a regular file"},
		{"a malformed key string", "opx.local/x+00000000+AAAA", "key"},
	}
	path := file("proof.json", string(proof))
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for name, run := range checkers {
				out, err := run(path, tc.key)
				if tc.want == "" {
					if err != nil || !strings.HasPrefix(out, "ok: ") {
						t.Errorf("%s refused a good proof with %s: %v\n%s", name, tc.name, err, out)
					}
					continue
				}
				var ee *exec.ExitError
				if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(out, tc.want) || strings.Count(out, "\n") != 1 {
					t.Errorf("%s: %v, want exit 1 and one line saying %q\n%s", name, err, tc.want, out)
				}
			}
		})
	}
}

func mustB64(s string) []byte {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// refProof is the inclusion proof of leaf index in the tree of entries,
// from transparency-dev/merkle's reference tree.
func refProof(t *testing.T, entries []string, index uint64) outsideProof {
	t.Helper()
	tree := refTreeOf(entries)
	hs, err := tree.InclusionProof(index, tree.Size())
	if err != nil {
		t.Fatal(err)
	}
	p := outsideProof{Index: index, TreeSize: tree.Size(), RootHash: base64.StdEncoding.EncodeToString(tree.Hash()),
		Entry: entries[index], Hashes: []string{}}
	for _, h := range hs {
		p.Hashes = append(p.Hashes, base64.StdEncoding.EncodeToString(h))
	}
	if l := sha256.Sum256(append([]byte{0}, entries[index]...)); string(l[:]) != string(tree.LeafHash(index)) {
		t.Fatal("reference leaf hash is not SHA-256(0x00 || entry)")
	}
	return p
}

// refTreeOf is transparency-dev/merkle's reference RFC 6962 tree of entries.
func refTreeOf(entries []string) *testonly.Tree {
	tree := testonly.New(rfc6962.DefaultHasher)
	for _, e := range entries {
		tree.AppendData([]byte(e))
	}
	return tree
}

// TestProofCheck_LedgerProof runs the outside checkers on an inclusion
// proof of a real signing ledger, in the JSON of `opx ledger prove --json`
// (tlog.Proof, built from the ledger's stored tree and its latest signed
// checkpoint), for entries at both ends and in the middle, and on the
// same proofs tampered with.
func TestProofCheck_LedgerProof(t *testing.T) {
	t.Parallel() // outside processes in its own directories, nothing shared
	checkers := proofCheckers(t)
	sl := newSignedLedger(t, 40)
	e, err := sl.l.Tail(1)
	if err != nil {
		t.Fatal(err)
	}
	var c ledger.CheckpointPayload
	if err := json.Unmarshal(e[0].Data, &c); err != nil || c.Note == "" {
		t.Fatalf("last entry is not a signed checkpoint: %s %v", e[0].Raw, err)
	}
	cp, err := tlog.Open([]byte(c.Note), sl.signer.Verifier())
	if err != nil {
		t.Fatal(err)
	}
	var good []byte
	for _, seq := range []uint64{0, 1, cp.Size / 2, cp.Size - 1} {
		entry, err := sl.l.Get(seq)
		if err != nil {
			t.Fatal(err)
		}
		hs, err := sl.l.InclusionProof(seq, cp.Size)
		if err != nil {
			t.Fatal(err)
		}
		b, err := tlog.NewProof(seq, entry.Raw, cp, c.Note, hs).Marshal()
		if err != nil {
			t.Fatal(err)
		}
		checkOutside(t, checkers, b, sl.vkey, "")
		if seq == cp.Size/2 {
			good = b
		}
	}
	_, otherKey, _ := tlog.GenerateKey(tlog.Origin(sl.l.ID()))
	for _, tc := range tamperProofCases(otherKey) {
		t.Run(tc.name, func(t *testing.T) {
			var p outsideProof
			json.Unmarshal(good, &p)
			key := tc.mut(&p)
			if key == "" {
				key = sl.vkey
			}
			b, _ := json.Marshal(p)
			checkOutside(t, checkers, b, key, tc.want)
		})
	}
}
