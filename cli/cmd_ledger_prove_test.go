package cli_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/opx-dev/opx/cli"
	"github.com/opx-dev/opx/ledger/tlog"
)

// writeFile writes b to a new file and returns its path.
func writeFile(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestLedgerProve: every entry a checkpoint covers proves against it, and
// the proof checks offline with the key alone (verify-proof).
func TestLedgerProve(t *testing.T) {
	s := signedLedger(t, 40, 10, 37)
	for _, seq := range []string{"0", "1", "7", "11", "12", "38"} {
		r := run(t, "ledger", "prove", seq, "--json", "--ledger", s.Path)
		r.wantCode(t, cli.ExitOK)
		p, err := tlog.ParseProof([]byte(r.stdout))
		if err != nil {
			t.Fatal(err)
		}
		if p.TreeSize != 40 || p.Checkpoint != s.Notes[40] {
			t.Errorf("entry %s: proved against tree %d, want the latest (40)", seq, p.TreeSize)
		}
		proof := writeFile(t, "proof.json", []byte(r.stdout))
		v := run(t, "ledger", "verify-proof", proof, "--key", s.Key.String())
		v.wantCode(t, cli.ExitOK)
		v.wantOut(t, "ok: entry "+seq+" is in the tree of 40 entries")
	}
	r := run(t, "ledger", "prove", "11", "--ledger", s.Path)
	r.wantCode(t, cli.ExitOK)
	r.wantOut(t, "proved: entry 11 (ledger.note) is leaf 11 of the tree of 40 entries of "+s.Key.Name(),
		"signed by   "+s.Key.String(), "the checkpoint of entry 40", "opx ledger verify-proof")
	// Against an earlier checkpoint, saved.
	saved := saveNote(t, s.Notes[12])
	r = run(t, "ledger", "prove", "3", "--checkpoint", saved, "--json", "--ledger", s.Path)
	r.wantCode(t, cli.ExitOK)
	if p, err := tlog.ParseProof([]byte(r.stdout)); err != nil || p.TreeSize != 12 || p.Checkpoint != s.Notes[12] {
		t.Fatalf("--checkpoint: %+v %v", p, err)
	}
	r = run(t, "ledger", "prove", "3", "--checkpoint", saved, "--key", s.Key.String(), "--ledger", s.Path)
	r.wantCode(t, cli.ExitOK)
	r.wantOut(t, "the checkpoint in "+saved)
}

// TestLedgerProve_Refusals: what cannot be proved says why.
func TestLedgerProve_Refusals(t *testing.T) {
	s := signedLedger(t, 20, 10)
	other := signedLedger(t, 20, 10)
	saved := saveNote(t, s.Notes[12])
	tests := []struct {
		name string
		args []string
		code int
		says string
	}{
		{"after the latest checkpoint", []string{"15"}, cli.ExitError,
			"entry 15 is not in the latest signed checkpoint (entry 12, a tree of 12 entries: entries 0..11), and only the engine signs: start it (opx start) and prove again"},
		{"beyond the ledger", []string{"99"}, cli.ExitError, "entry 99 is not in the ledger: its last entry is 22"},
		{"after a saved checkpoint", []string{"15", "--checkpoint", saved}, cli.ExitError, "entry 15 is not in the checkpoint's tree of 12 entries"},
		{"not a number", []string{"x"}, cli.ExitUsage, "not a non-negative integer"},
		{"--key without --checkpoint", []string{"1", "--key", s.Key.String()}, cli.ExitUsage, "--key goes with --checkpoint"},
		{"a checkpoint by another key", []string{"1", "--checkpoint", saveNote(t, other.Notes[12])}, cli.ExitIntegrity, "not signed by the key"},
		{"checked with another key", []string{"1", "--checkpoint", saved, "--key", other.Key.String()}, cli.ExitIntegrity, "not signed by the key"},
		{"a checkpoint that is not a note", []string{"1", "--checkpoint", writeFile(t, "x", []byte("hello\n"))}, cli.ExitIntegrity, "malformed"},
		{"no checkpoint file", []string{"1", "--checkpoint", filepath.Join(t.TempDir(), "nope")}, cli.ExitError, "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, append([]string{"ledger", "prove", "--ledger", s.Path}, tt.args...)...)
			r.wantCode(t, tt.code)
			r.wantErr(t, tt.says)
		})
	}
}

// TestLedgerProve_Tampered: a proof from the real ledger with one hash,
// the entry's bytes or the tree size changed no longer verifies (exit 4).
func TestLedgerProve_Tampered(t *testing.T) {
	s := signedLedger(t, 40, 37)
	r := run(t, "ledger", "prove", "17", "--json", "--ledger", s.Path)
	r.wantCode(t, cli.ExitOK)
	flip := func(h string) string {
		b, _ := base64.StdEncoding.DecodeString(h)
		b[0] ^= 1
		return base64.StdEncoding.EncodeToString(b)
	}
	tests := map[string]func(p *tlog.Proof){
		"one hash changed":    func(p *tlog.Proof) { p.Hashes[len(p.Hashes)/2] = flip(p.Hashes[len(p.Hashes)/2]) },
		"entry bytes changed": func(p *tlog.Proof) { p.Entry = strings.Replace(p.Entry, "note 16", "note 61", 1) },
		"tree_size changed":   func(p *tlog.Proof) { p.TreeSize-- },
	}
	for name, change := range tests {
		t.Run(name, func(t *testing.T) {
			p, err := tlog.ParseProof([]byte(r.stdout))
			if err != nil {
				t.Fatal(err)
			}
			change(p)
			b, _ := p.Marshal()
			v := run(t, "ledger", "verify-proof", writeFile(t, "proof.json", b), "--key", s.Key.String())
			v.wantCode(t, cli.ExitIntegrity)
			v.wantErr(t, "does not verify")
			if strings.Count(v.stderr, "\n") != 1 || strings.Contains(v.stderr, "[") {
				t.Errorf("not one line, with hashes in hex:\n%s", v.stderr)
			}
		})
	}
}

// TestLedgerProve_CheckpointBeyondLedger: a checkpoint that covers more
// entries than the ledger holds (the ledger was cut since) is an
// integrity failure, not an error of use.
func TestLedgerProve_CheckpointBeyondLedger(t *testing.T) {
	s := signedLedger(t, 20, 10, 20)
	saved := saveNote(t, s.Notes[23])
	cut := forge(t, s, func(es []map[string]any) []map[string]any { return es[:15] })
	r := run(t, "ledger", "prove", "3", "--checkpoint", saved, "--ledger", cut)
	r.wantCode(t, cli.ExitIntegrity)
	r.wantErr(t, "the checkpoint covers 23 entries, more than the ledger holds")
}

// TestLedgerProve_Output: -o FILE holds the proof --json prints, written
// only once it is built and checked; a prove that fails leaves no file
// (nor a temporary one) and a proof already in FILE whole.
func TestLedgerProve_Output(t *testing.T) {
	s := signedLedger(t, 20, 10)
	dir := t.TempDir()
	out := filepath.Join(dir, "entry-3.proof.json")
	want := run(t, "ledger", "prove", "3", "--json", "--ledger", s.Path)
	want.wantCode(t, cli.ExitOK)

	r := run(t, "ledger", "prove", "3", "-o", out, "--ledger", s.Path)
	r.wantCode(t, cli.ExitOK)
	r.wantOut(t, "proved: entry 3", "Wrote the proof to "+out)
	if b, err := os.ReadFile(out); err != nil || string(b) != want.stdout {
		t.Fatalf("-o wrote %q (%v), --json prints %q", b, err, want.stdout)
	}
	r = run(t, "ledger", "prove", "4", "--ledger", s.Path, "--json", "--output", out)
	r.wantCode(t, cli.ExitOK)
	if r.stdout != "" {
		t.Errorf("--json -o: stdout %q, want the proof in the file only", r.stdout)
	}
	if p, err := tlog.ParseProof(mustRead(t, out)); err != nil || p.Index != 4 {
		t.Fatalf("-o replaced with %+v %v", p, err)
	}
	run(t, "ledger", "verify-proof", out, "--key", s.Key.String()).wantCode(t, cli.ExitOK)
	kept := mustRead(t, out)

	fails := []struct {
		name string
		args []string
		code int
	}{
		{"an entry after the latest checkpoint", []string{"15"}, cli.ExitError},
		{"an entry beyond the ledger", []string{"99"}, cli.ExitError},
		{"a checkpoint by another key", []string{"1", "--checkpoint", saveNote(t, signedLedger(t, 20, 10).Notes[12])}, cli.ExitIntegrity},
		{"a missing ledger", []string{"1", "--ledger", filepath.Join(dir, "nope.db")}, cli.ExitError},
	}
	for _, tc := range fails {
		t.Run(tc.name, func(t *testing.T) {
			for _, target := range []string{out, filepath.Join(dir, "new.proof.json")} {
				r := run(t, append([]string{"ledger", "prove", "--ledger", s.Path, "-o", target}, tc.args...)...)
				r.wantCode(t, tc.code)
				if target == out {
					if b := mustRead(t, out); !bytes.Equal(b, kept) {
						t.Errorf("a failed prove changed %s: %q", out, b)
					}
				} else if _, err := os.Lstat(target); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("a failed prove left %s (%v)", target, err)
				}
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 1 {
				t.Errorf("%s holds %d files, want the one proof: %v", dir, len(ents), ents)
			}
		})
	}
	// A directory that is not there: the error names the file, nothing is written.
	r = run(t, "ledger", "prove", "3", "-o", filepath.Join(dir, "no", "such", "dir.json"), "--ledger", s.Path)
	r.wantCode(t, cli.ExitError)
	r.wantErr(t, "dir.json")
}

// TestLedgerProve_OutputNotRegular: -o replaces a regular file only
// (keeping its mode, through a symbolic link to it), never a FIFO, a
// device or a directory: a rename over /dev/null would put a file in its
// place. A FIFO stands for the device here.
func TestLedgerProve_OutputNotRegular(t *testing.T) {
	s := signedLedger(t, 20, 10)
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{fifo, dir} {
		r := run(t, "ledger", "prove", "3", "-o", target, "--ledger", s.Path)
		r.wantCode(t, cli.ExitError)
		r.wantErr(t, "not a regular file")
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode().Type() != fs.ModeNamedPipe {
		t.Errorf("the FIFO is now %v (%v)", fi.Mode(), err)
	}
	real := writeFile(t, "real.json", []byte("old"))
	os.Chmod(real, 0o644)
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	run(t, "ledger", "prove", "3", "-o", link, "--ledger", s.Path).wantCode(t, cli.ExitOK)
	if fi, err := os.Lstat(link); err != nil || fi.Mode().Type() != fs.ModeSymlink {
		t.Errorf("the link is now %v (%v)", fi.Mode(), err)
	}
	if fi, err := os.Stat(real); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("the file the link names: %v (%v), want mode 0644 kept", fi.Mode(), err)
	}
	if p, err := tlog.ParseProof(mustRead(t, real)); err != nil || p.Index != 3 {
		t.Errorf("the file the link names holds %+v %v", p, err)
	}
	dangling := filepath.Join(dir, "dangling.json")
	os.Symlink(filepath.Join(dir, "nowhere", "x"), dangling)
	run(t, "ledger", "prove", "3", "-o", dangling, "--ledger", s.Path).wantCode(t, cli.ExitError)
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
