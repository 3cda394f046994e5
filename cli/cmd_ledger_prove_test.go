package cli_test

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
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
		{"after the latest checkpoint", []string{"15"}, cli.ExitError, "entry 15 is not in the checkpoint's tree of 12 entries"},
		{"beyond the ledger", []string{"99"}, cli.ExitError, "not in the checkpoint's tree"},
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
