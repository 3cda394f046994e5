package tlog_test

import (
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/opx-dev/opx/internal/regularfile"
	"github.com/opx-dev/opx/ledger/tlog"
	"github.com/transparency-dev/merkle/rfc6962"
	"github.com/transparency-dev/merkle/testonly"
)

// testTree is a tree of n entries shaped like ledger entries, built with
// transparency-dev/merkle's reference tree, and a signer for it.
type testTree struct {
	entries [][]byte
	tree    *testonly.Tree
	signer  *tlog.Signer
}

func newTestTree(t testing.TB, n int) *testTree {
	tt := &testTree{tree: testonly.New(rfc6962.DefaultHasher), signer: newSigner(t, tlog.Origin(testID))}
	for i := 0; i < n; i++ {
		e := []byte(fmt.Sprintf(`{"data":{"text":"<entry & %d>"},"prev":"%064d","seq":%d,"session":"","ts":"2026-11-25T10:00:00Z","type":"ledger.note"}`, i, i, i))
		tt.entries = append(tt.entries, e)
		tt.tree.AppendData(e)
	}
	return tt
}

// proof is the proof of entry index against a checkpoint of size.
func (tt *testTree) proof(t testing.TB, index, size uint64) *tlog.Proof {
	var root [32]byte
	copy(root[:], tt.tree.HashAt(size))
	note, err := tt.signer.Sign(size, root)
	if err != nil {
		t.Fatal(err)
	}
	hashes, err := tt.tree.InclusionProof(index, size)
	if err != nil {
		t.Fatal(err)
	}
	return tlog.NewProof(index, tt.entries[index], tlog.Checkpoint{Size: size, Root: root}, note, hashes)
}

// TestProof_RoundTrip: every entry of trees of several sizes proves
// against a checkpoint, after a trip through the JSON.
func TestProof_RoundTrip(t *testing.T) {
	tt := newTestTree(t, 37)
	for _, size := range []uint64{1, 2, 7, 16, 37} {
		for i := uint64(0); i < size; i++ {
			b, err := tt.proof(t, i, size).Marshal()
			if err != nil {
				t.Fatal(err)
			}
			p, err := tlog.ParseProof(b)
			if err != nil {
				t.Fatalf("ParseProof(%s): %v", b, err)
			}
			cp, err := p.Verify(tt.signer.Verifier())
			if err != nil || cp.Size != size {
				t.Fatalf("entry %d of %d: %+v, %v", i, size, cp, err)
			}
		}
	}
	b, _ := tt.proof(t, 3, 7).Marshal()
	if !strings.Contains(string(b), `<entry & 3>`) {
		t.Errorf("the entry is not shown as stored: %s", b)
	}
}

// TestProof_Tampered: a proof changed in any part, or checked with
// another key, does not verify.
func TestProof_Tampered(t *testing.T) {
	tt := newTestTree(t, 37)
	other := newSigner(t, tlog.Origin(testID))
	flip := func(s string) string {
		b, _ := base64.StdEncoding.DecodeString(s)
		b[0] ^= 1
		return base64.StdEncoding.EncodeToString(b)
	}
	tests := []struct {
		name   string
		change func(p *tlog.Proof)
		key    tlog.Verifier
		want   error
	}{
		{"one hash changed", func(p *tlog.Proof) { p.Hashes[2] = flip(p.Hashes[2]) }, tt.signer.Verifier(), tlog.ErrProof},
		{"a hash dropped", func(p *tlog.Proof) { p.Hashes = p.Hashes[1:] }, tt.signer.Verifier(), tlog.ErrProof},
		{"hashes reordered", func(p *tlog.Proof) { p.Hashes[0], p.Hashes[1] = p.Hashes[1], p.Hashes[0] }, tt.signer.Verifier(), tlog.ErrProof},
		{"entry bytes changed", func(p *tlog.Proof) { p.Entry = strings.Replace(p.Entry, "entry &", "entry  &", 1) }, tt.signer.Verifier(), tlog.ErrProof},
		{"another entry", func(p *tlog.Proof) { p.Entry = string(tt.entries[6]) }, tt.signer.Verifier(), tlog.ErrProof},
		{"index changed", func(p *tlog.Proof) { p.Index = 6 }, tt.signer.Verifier(), tlog.ErrProof},
		{"tree_size changed", func(p *tlog.Proof) { p.TreeSize = 36 }, tt.signer.Verifier(), tlog.ErrProof},
		{"root_hash changed", func(p *tlog.Proof) { p.RootHash = flip(p.RootHash) }, tt.signer.Verifier(), tlog.ErrProof},
		{"checkpoint of another size", func(p *tlog.Proof) { p.Checkpoint = tt.proof(t, 5, 36).Checkpoint }, tt.signer.Verifier(), tlog.ErrProof},
		{"checkpoint size rewritten", func(p *tlog.Proof) { p.Checkpoint = strings.Replace(p.Checkpoint, "\n37\n", "\n36\n", 1) }, tt.signer.Verifier(), tlog.ErrUnsigned},
		{"checked with another key", func(*tlog.Proof) {}, other.Verifier(), tlog.ErrUnsigned},
		{"checkpoint by another key", func(p *tlog.Proof) {
			var root [32]byte
			copy(root[:], tt.tree.HashAt(37))
			p.Checkpoint, _ = other.Sign(37, root)
		}, tt.signer.Verifier(), tlog.ErrUnsigned},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := tt.proof(t, 5, 37)
			if _, err := p.Verify(tt.signer.Verifier()); err != nil {
				t.Fatalf("untouched proof: %v", err)
			}
			tc.change(p)
			b, err := p.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			q, err := tlog.ParseProof(b)
			if err == nil {
				_, err = q.Verify(tc.key)
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("Verify = %v, want %v", err, tc.want)
			}
			// One line a reader can use: hashes in hex, never merkle's
			// multi-line decimal byte arrays.
			if msg := err.Error(); strings.Contains(msg, "\n") || rawBytes.MatchString(msg) {
				t.Errorf("Verify = %q: not one line with hex", msg)
			}
		})
	}
}

// rawBytes matches a byte slice printed with %v: [162 44 226 ...].
var rawBytes = regexp.MustCompile(`\[\d+ \d+ \d+`)

// TestProof_RootMismatchInHex: a path that leads elsewhere names both
// roots in hex, in one line.
func TestProof_RootMismatchInHex(t *testing.T) {
	tt := newTestTree(t, 37)
	p := tt.proof(t, 5, 37)
	b, _ := base64.StdEncoding.DecodeString(p.Hashes[0])
	b[0] ^= 1
	p.Hashes[0] = base64.StdEncoding.EncodeToString(b)
	_, err := p.Verify(tt.signer.Verifier())
	want := regexp.MustCompile(`^proof does not verify: entry 5 \(leaf hash [0-9a-f]{64}\) is not in tree 37 \S+: the hashes lead to root [0-9a-f]{64}, not ` +
		fmt.Sprintf("%x", tt.tree.HashAt(37)) + `$`)
	if err == nil || !want.MatchString(err.Error()) {
		t.Fatalf("Verify = %v, want %v", err, want)
	}
}

// TestParseProof_Hostile: malformed proofs are ErrMalformed with a clear
// error, never a panic, and a proof file is read bounded from regular
// files only.
func TestParseProof_Hostile(t *testing.T) {
	tt := newTestTree(t, 9)
	good, _ := tt.proof(t, 3, 9).Marshal()
	h := base64.StdEncoding.EncodeToString(make([]byte, 32))
	tests := map[string]string{
		"empty":              "",
		"not json":           "\x00\xff",
		"an array":           "[]",
		"null":               "null",
		"trailing data":      string(good) + "{}",
		"unknown field":      strings.Replace(string(good), `"index"`, `"extra":1,"index"`, 1),
		"missing checkpoint": `{"index":0,"tree_size":1,"root_hash":"` + h + `","hashes":[],"entry":"{}"}`,
		"tree size 0":        `{"index":0,"tree_size":0,"root_hash":"` + h + `","hashes":[],"entry":"{}","checkpoint":""}`,
		"index outside":      `{"index":1,"tree_size":1,"root_hash":"` + h + `","hashes":[],"entry":"{}","checkpoint":""}`,
		"negative index":     `{"index":-1,"tree_size":1,"root_hash":"` + h + `","hashes":[],"entry":"{}","checkpoint":""}`,
		"float size":         `{"index":0,"tree_size":1.5,"root_hash":"` + h + `","hashes":[],"entry":"{}","checkpoint":""}`,
		"short hash":         `{"index":0,"tree_size":2,"root_hash":"` + h + `","hashes":["AAAA"],"entry":"{}","checkpoint":""}`,
		"bad base64":         `{"index":0,"tree_size":2,"root_hash":"!!","hashes":[],"entry":"{}","checkpoint":""}`,
		"hashes not strings": `{"index":0,"tree_size":2,"root_hash":"` + h + `","hashes":[1],"entry":"{}","checkpoint":""}`,
		"too many hashes":    `{"index":0,"tree_size":2,"root_hash":"` + h + `","hashes":[` + strings.Repeat(`"`+h+`",`, 64) + `"` + h + `"],"entry":"{}","checkpoint":""}`,
		"deep nesting":       `{"index":0,"extra":` + strings.Repeat("[", 100000) + `}`,
	}
	for name, in := range tests {
		t.Run(name, func(t *testing.T) {
			p, err := tlog.ParseProof([]byte(in))
			if !errors.Is(err, tlog.ErrMalformed) {
				t.Fatalf("ParseProof = %+v, %v; want ErrMalformed", p, err)
			}
		})
	}
	if _, err := tlog.ParseProof([]byte(tests["tree size 0"])); err == nil || !strings.Contains(err.Error(), "tree_size 0") {
		t.Errorf("ParseProof of tree_size 0: %v, want it to say tree_size 0", err)
	}
	dir := t.TempDir()
	big := filepath.Join(dir, "big.json")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(tlog.MaxProofBytes + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := tlog.ReadProof(big); !errors.Is(err, regularfile.ErrTooLarge) {
		t.Errorf("ReadProof of an oversized file: %v", err)
	}
	for _, p := range []string{dir, "/dev/zero"} {
		if _, err := tlog.ReadProof(p); !errors.Is(err, regularfile.ErrNotRegular) {
			t.Errorf("ReadProof(%s): %v", p, err)
		}
	}
}

// TestRootBuilder: the root recomputed entry by entry is the reference
// tree's at every size.
func TestRootBuilder(t *testing.T) {
	tt := newTestTree(t, 70)
	b := tlog.NewRootBuilder()
	if r := b.Root(); string(r[:]) != string(tt.tree.HashAt(0)) {
		t.Fatalf("empty root %x", r)
	}
	for i, e := range tt.entries {
		b.Append(e)
		if r := b.Root(); b.Size() != uint64(i+1) || string(r[:]) != string(tt.tree.HashAt(uint64(i+1))) {
			t.Fatalf("size %d: root %x, want %x", i+1, r, tt.tree.HashAt(uint64(i+1)))
		}
	}
}
