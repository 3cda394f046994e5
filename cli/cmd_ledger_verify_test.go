package cli_test

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/opx-dev/opx/cli"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/ledgertest"
	bolt "go.etcd.io/bbolt"
)

func TestLedgerVerify_OK(t *testing.T) {
	lg := newLedger(t, 20)
	head := fmt.Sprintf("head %d %s", lg.Head.Seq, lg.Head.Hash)
	tests := []struct {
		name string
		args []string
	}{
		{"plain", []string{"ledger", "verify", "--ledger", lg.Path}},
		{"strict", []string{"ledger", "verify", "--strict", "--ledger", lg.Path}},
		{"global flag", []string{"--ledger", lg.Path, "ledger", "verify"}},
		{"group flag", []string{"ledger", "--ledger", lg.Path, "verify"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, tt.args...)
			r.wantCode(t, cli.ExitOK)
			r.wantOut(t, "ok: 21 entries, "+head)
			if r.stderr != "" {
				t.Errorf("stderr not empty: %q", r.stderr)
			}
		})
	}
}

func TestLedgerVerify_JSON(t *testing.T) {
	lg := newLedger(t, 5)
	r := run(t, "ledger", "verify", "--ledger", lg.Path, "--json")
	r.wantCode(t, cli.ExitOK)
	m := r.jsonObject(t)
	want := []string{"entries", "failures", "head_hash", "head_seq", "ok"}
	if got := keys(m); !reflect.DeepEqual(got, want) {
		t.Errorf("keys %v, want %v", got, want)
	}
	if m["ok"] != true || m["entries"].(jsonNumber).String() != "6" ||
		m["head_seq"].(jsonNumber).String() != "5" || m["head_hash"] != lg.Head.Hash.String() {
		t.Errorf("report %v, want ok, 6 entries, head 5 %s", m, lg.Head.Hash)
	}
	if f, ok := m["failures"].([]any); !ok || len(f) != 0 {
		t.Errorf("failures %#v, want []", m["failures"])
	}
}

func TestLedgerVerify_FlippedByte(t *testing.T) {
	lg := newLedger(t, 10)
	bad := tampered(t, lg.Path, 4)
	tests := []struct {
		name string
		json bool
	}{{"human", false}, {"json", true}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := []string{"ledger", "verify", "--ledger", bad}
			if tt.json {
				args = append(args, "--json")
			}
			r := run(t, args...)
			r.wantCode(t, cli.ExitIntegrity)
			r.wantErr(t, "integrity failure")
			if !tt.json {
				r.wantOut(t, "seq 5  hash-mismatch  ", "FAILED: 1 failure in 11 entries")
				return
			}
			m := r.jsonObject(t)
			fs := m["failures"].([]any)
			if m["ok"] != false || len(fs) != 1 {
				t.Fatalf("report %v, want not ok with one failure", m)
			}
			f := fs[0].(map[string]any)
			if got := keys(f); !reflect.DeepEqual(got, []string{"detail", "kind", "seq"}) {
				t.Errorf("failure keys %v", got)
			}
			if f["kind"] != string(ledger.KindHashMismatch) || f["seq"].(jsonNumber).String() != "5" {
				t.Errorf("failure %v, want hash-mismatch at seq 5", f)
			}
		})
	}
}

func TestLedgerVerify_Strict(t *testing.T) {
	lg := newLedger(t, 3)
	// The last entry, re-spaced: still a valid entry, but not canonical,
	// and no longer the bytes the head names.
	cp := ledgertest.Copy(t, lg.Path, filepath.Join(t.TempDir(), "spaced.db"))
	ledgertest.Edit(t, cp, func(tx *bolt.Tx) error {
		var k [8]byte
		binary.BigEndian.PutUint64(k[:], 3)
		b := tx.Bucket([]byte("entries"))
		return b.Put(k[:], append([]byte("{ "), b.Get(k[:])[1:]...))
	})
	tests := []struct {
		name  string
		args  []string
		kinds string
	}{
		{"lenient", nil, "head-mismatch"},
		{"strict", []string{"--strict"}, "head-mismatch not-canonical"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, append([]string{"ledger", "verify", "--json", "--ledger", cp}, tt.args...)...)
			r.wantCode(t, cli.ExitIntegrity)
			var kinds []string
			for _, f := range r.jsonObject(t)["failures"].([]any) {
				kinds = append(kinds, f.(map[string]any)["kind"].(string))
			}
			if got := strings.Join(kinds, " "); got != tt.kinds {
				t.Errorf("kinds %q, want %q", got, tt.kinds)
			}
		})
	}
}

func TestLedgerVerify_ManyFailures(t *testing.T) {
	lg := newLedger(t, 130)
	var seqs []uint64
	for s := uint64(1); s <= 120; s++ {
		seqs = append(seqs, s)
	}
	bad := tampered(t, lg.Path, seqs...)
	r := run(t, "ledger", "verify", "--ledger", bad)
	r.wantCode(t, cli.ExitIntegrity)
	r.wantOut(t, "... and 20 more (use --json)", "FAILED: 120 failures")
	if n := strings.Count(r.stdout, "hash-mismatch"); n != 100 {
		t.Errorf("%d failure lines, want 100", n)
	}
	r = run(t, "ledger", "verify", "--ledger", bad, "--json")
	r.wantCode(t, cli.ExitIntegrity)
	if n := len(r.jsonObject(t)["failures"].([]any)); n != 120 {
		t.Errorf("--json lists %d failures, want 120", n)
	}
}

func TestLedgerVerify_HeadMismatch(t *testing.T) {
	lg := newLedger(t, 5)
	tests := []struct {
		name, key, value string
		out, err         string
	}{
		// Either half of a wrong head opens read-only and verify
		// reports it as a finding.
		{"head hash", "head_hash", strings.Repeat("ab", 32), "seq 5  head-mismatch  meta says head 5 abab", "integrity failure"},
		{"head seq", "head_seq", "3", "seq 5  head-mismatch  meta says head 3 ", "integrity failure"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cp := ledgertest.Copy(t, lg.Path, filepath.Join(t.TempDir(), "head.db"))
			ledgertest.Edit(t, cp, func(tx *bolt.Tx) error {
				return tx.Bucket([]byte("meta")).Put([]byte(tt.key), []byte(tt.value))
			})
			r := run(t, "ledger", "verify", "--ledger", cp)
			r.wantCode(t, cli.ExitIntegrity)
			r.wantOut(t, tt.out)
			r.wantErr(t, tt.err)
		})
	}
}

func TestLedgerVerify_NotALedger(t *testing.T) {
	dir := t.TempDir()
	random := make([]byte, 16384)
	rand.Read(random)
	files := map[string][]byte{
		"random.db": random,
		"empty.db":  {},
		"text.db":   []byte("hello, not a ledger\n"),
	}
	for name, content := range files {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name)
			if err := os.WriteFile(path, content, 0o600); err != nil {
				t.Fatal(err)
			}
			r := run(t, "ledger", "verify", "--ledger", path)
			r.wantCode(t, cli.ExitError)
			r.wantErr(t, path+" is not a readable opx ledger")
			if r.stdout != "" {
				t.Errorf("stdout not empty: %q", r.stdout)
			}
		})
	}
}

func TestLedgerVerify_Missing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nope.db")
	r := run(t, "ledger", "verify", "--ledger", path)
	r.wantCode(t, cli.ExitError)
	r.wantErr(t, "no ledger at "+path)
	if _, err := os.Stat(path); err == nil {
		t.Error("verify created the ledger file")
	}
}

func TestLedgerVerify_Locked(t *testing.T) {
	lg := newLedger(t, 3)
	l, err := ledger.Open(lg.Path, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	r := run(t, "ledger", "verify", "--ledger", lg.Path)
	r.wantCode(t, cli.ExitError)
	r.wantErr(t, "an engine holds "+lg.Path)
}

func TestLedgerVerify_Export(t *testing.T) {
	lg := newLedger(t, 12)
	dir := t.TempDir()
	full := filepath.Join(dir, "full.jsonl.zst")
	seg := filepath.Join(dir, "s2.jsonl")
	run(t, "ledger", "export", "--ledger", lg.Path, "-o", full).wantCode(t, cli.ExitOK)
	run(t, "ledger", "export", "--ledger", lg.Path, "-o", seg, "--session", "s2").wantCode(t, cli.ExitOK)
	noBundle := filepath.Join(dir, "lonely.jsonl")
	copyFile(t, filepath.Join(dir, "s2.jsonl"), noBundle)

	tests := []struct {
		name string
		path string
		code int
		out  []string
	}{
		{"full", full, cli.ExitOK, []string{"full export of ledger " + lg.Head.LedgerID, "ok: 13 entries"}},
		{"segment", seg, cli.ExitOK, []string{`segment of session "s2"`, "entries 2..11", "ok: 10 entries, head 11"}},
		{"no manifest", noBundle, cli.ExitIntegrity, []string{"no manifest", "FAILED"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, "ledger", "verify", tt.path)
			r.wantCode(t, tt.code)
			r.wantOut(t, tt.out...)
		})
	}
}

func TestLedgerVerify_Usage(t *testing.T) {
	lg := newLedger(t, 1)
	tests := []struct {
		name string
		args []string
		err  string
	}{
		{"two exports", []string{"ledger", "verify", "a.jsonl", "b.jsonl"}, `unexpected argument "b.jsonl"`},
		{"ledger and export", []string{"ledger", "verify", "--ledger", lg.Path, "a.jsonl"}, "not both"},
		{"unknown flag", []string{"ledger", "verify", "--frobnicate"}, "flag provided but not defined"},
		{"unknown flag after arg", []string{"ledger", "verify", "a.jsonl", "--frobnicate"}, "flag provided but not defined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, tt.args...)
			r.wantCode(t, cli.ExitUsage)
			r.wantErr(t, tt.err, "Run 'opx ledger verify --help' for usage.")
		})
	}
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestLedgerVerify_NotAnExport: a file that is not an export at all (a
// README, a binary, their zstd) is one line on stderr and exit 1, for
// verify and import; an export whose first line is damaged (a flipped
// byte, a member's name spoilt, the line cut short) stays an integrity
// failure at its position, exit 4.
func TestLedgerVerify_NotAnExport(t *testing.T) {
	dir := t.TempDir()
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	random := make([]byte, 16384)
	rand.Read(random)
	lg := newLedger(t, 5)
	full := filepath.Join(dir, "full.jsonl")
	run(t, "ledger", "export", "--ledger", lg.Path, "-o", full).wantCode(t, cli.ExitOK)
	export, err := os.ReadFile(full)
	if err != nil {
		t.Fatal(err)
	}
	first, rest, _ := bytes.Cut(export, []byte("\n"))
	damaged := func(fn func([]byte) []byte) []byte {
		return append(append(fn(append([]byte(nil), first...)), '\n'), rest...)
	}
	tests := []struct {
		name    string
		content []byte
		code    int
	}{
		{"README", readme, cli.ExitError},
		{"random bytes", random, cli.ExitError},
		{"README zstd", zstdOf(t, readme), cli.ExitError},
		{"JSON of something else", []byte(`{"name":"x","version":"1.0.0"}` + "\n"), cli.ExitError},
		{"flipped byte", damaged(func(b []byte) []byte { b[len(b)/2] ^= 0x20; return b }), cli.ExitIntegrity},
		{"member renamed", damaged(func(b []byte) []byte { return bytes.Replace(b, []byte(`"seq":`), []byte(`"sex":`), 1) }), cli.ExitIntegrity},
		{"cut short", damaged(func(b []byte) []byte { return b[:len(b)/3] }), cli.ExitIntegrity},
		{"newline written into it", damaged(func(b []byte) []byte { b[3] = '\n'; return b }), cli.ExitIntegrity},
		{"only newlines", []byte("\n\n\n"), cli.ExitIntegrity},
		{"opening brace gone", damaged(func(b []byte) []byte { return b[1:] }), cli.ExitIntegrity},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.jsonl")
			if err := os.WriteFile(path, tt.content, 0o600); err != nil {
				t.Fatal(err)
			}
			r := run(t, "ledger", "verify", path)
			r.wantCode(t, tt.code)
			if tt.code == cli.ExitError {
				r.wantErr(t, "not an opx export: it begins with")
				if r.stdout != "" || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
					t.Errorf("not one line:\nstdout %q\nstderr %q", r.stdout, r.stderr)
				}
				imp := run(t, "ledger", "import", path, "--ledger", filepath.Join(t.TempDir(), "i.db"))
				imp.wantCode(t, cli.ExitError)
				imp.wantErr(t, "not an opx export")
			}
		})
	}
}

// zstdOf compresses b as zstd.
func zstdOf(t *testing.T, b []byte) []byte {
	t.Helper()
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	return enc.EncodeAll(b, nil)
}
