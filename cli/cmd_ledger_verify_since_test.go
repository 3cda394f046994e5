package cli_test

import (
	"strings"
	"testing"

	"github.com/opx-dev/opx/cli"
)

// TestLedgerVerifySince_Extension: a ledger that only grew since a saved
// checkpoint passes, by a consistency proof, even across a later key.
func TestLedgerVerifySince_Extension(t *testing.T) {
	s := signedLedger(t, 10, 10)
	saved := saveNote(t, s.Notes[12])
	s = growLedger(t, s, 15, 5, 15)
	for _, args := range [][]string{{}, {"--strict"}, {"--key", s.Key.String()}} {
		r := run(t, append([]string{"ledger", "verify", "--since", saved, "--ledger", s.Path}, args...)...)
		r.wantCode(t, cli.ExitOK)
		r.wantOut(t, "is an append-only extension of "+saved+" (tree of 12 entries", "consistency proof checked")
	}
	r := run(t, "ledger", "verify", "--json", "--since", saved, "--ledger", s.Path)
	r.wantCode(t, cli.ExitOK)
	m := r.jsonObject(t)
	since, _ := m["since"].(map[string]any)
	if m["ok"] != true || since["extended"] != true || since["tree_size"] != jsonNumber("12") || since["ledger_tree_size"] != jsonNumber(utoa(uint64(s.entries(t)))) {
		t.Errorf("--json: %v", m)
	}
	// The checkpoint of the ledger as it is now is its own extension.
	r = run(t, "ledger", "checkpoint", "--ledger", s.Path)
	r.wantCode(t, cli.ExitOK)
	run(t, "ledger", "verify", "--since", saveNote(t, r.stdout), "--ledger", s.Path).wantCode(t, cli.ExitOK)
}

// TestLedgerVerifySince_Fork: two ledgers from a common prefix, each
// perfectly chained: neither is an extension of the other's later
// checkpoint (exit 4, not-extension), both of the common one.
func TestLedgerVerifySince_Fork(t *testing.T) {
	a := signedLedger(t, 10, 10)
	common := saveNote(t, a.Notes[12])
	b := fork(t, a)
	a = growLedger(t, a, 10, 10)
	b.Text = "the other story, note %d"
	b = growLedger(t, b, 20, 20)
	aLater := saveNote(t, a.Notes[23])
	for _, l := range []string{a.Path, b.Path} {
		run(t, "ledger", "verify", "--strict", "--since", common, "--ledger", l).wantCode(t, cli.ExitOK)
	}
	run(t, "ledger", "verify", "--strict", "--ledger", b.Path).wantCode(t, cli.ExitOK)
	r := run(t, "ledger", "verify", "--strict", "--since", aLater, "--ledger", b.Path)
	r.wantCode(t, cli.ExitIntegrity)
	r.wantOut(t, "not-extension", "are not those "+aLater+" signed", "NOT an append-only extension")
	r = run(t, "ledger", "verify", "--json", "--since", aLater, "--ledger", b.Path)
	r.wantCode(t, cli.ExitIntegrity)
	wantOnlyKind(t, r, "not-extension")
}

// TestLedgerVerifySince_OtherKey: a checkpoint signed by another key, or
// checked with another key, or not a checkpoint, is an integrity failure.
func TestLedgerVerifySince_OtherKey(t *testing.T) {
	s := signedLedger(t, 10, 10)
	other := signedLedger(t, 10, 10)
	tests := []struct {
		name string
		args []string
		says string
	}{
		{"signed by another key", []string{"--since", saveNote(t, other.Notes[12])}, "not signed by the key"},
		{"checked with another key", []string{"--since", saveNote(t, s.Notes[12]), "--key", other.Key.String()}, "not signed by the key"},
		{"signature changed", []string{"--since", saveNote(t, strings.Replace(s.Notes[12], "\n12\n", "\n11\n", 1))}, "not signed by the key"},
		{"not a note", []string{"--since", writeFile(t, "x", []byte("opx.local/ledger/x\n1\nAAAA\n"))}, "malformed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, append([]string{"ledger", "verify", "--ledger", s.Path}, tt.args...)...)
			r.wantCode(t, cli.ExitIntegrity)
			r.wantErr(t, tt.says)
		})
	}
}

// TestLedgerVerifySince_Refusals: usage and unreadable files.
func TestLedgerVerifySince_Refusals(t *testing.T) {
	s := signedLedger(t, 10, 10)
	saved := saveNote(t, s.Notes[12])
	tests := []struct {
		name string
		args []string
		code int
		says string
	}{
		{"--key without --since", []string{"--key", s.Key.String()}, cli.ExitUsage, "--key goes with --since"},
		{"a bad --key", []string{"--since", saved, "--key", "nonsense"}, cli.ExitUsage, "--key"},
		{"a directory", []string{"--since", t.TempDir()}, cli.ExitError, "not a regular file"},
		{"a device", []string{"--since", "/dev/zero"}, cli.ExitError, "not a regular file"},
		{"too large", []string{"--since", writeFile(t, "big", make([]byte, 65<<10))}, cli.ExitError, "file too large"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, append([]string{"ledger", "verify", "--ledger", s.Path}, tt.args...)...)
			r.wantCode(t, tt.code)
			r.wantErr(t, tt.says)
		})
	}
	lt := newLedger(t, 3)
	r := run(t, "ledger", "verify", "--since", saved, "--ledger", lt.Path)
	r.wantCode(t, cli.ExitError)
	r.wantErr(t, "records no checkpoint key", "give the key with --key")
}

// wantOnlyKind fails unless r's --json report fails with kind only.
func wantOnlyKind(t *testing.T, r result, kind string) {
	t.Helper()
	m := r.jsonObject(t)
	fs, _ := m["failures"].([]any)
	if m["ok"] != false || len(fs) == 0 {
		t.Fatalf("report: %v", m)
	}
	for _, f := range fs {
		if k := f.(map[string]any)["kind"]; k != kind {
			t.Errorf("failure %v, want only %s", f, kind)
		}
	}
}

// TestLedgerVerifySince_Rewritten: entry 10's payload changed, every
// later prev, checkpoint (tree and signature, with the key on the
// machine), tile and the head recomputed: the ledger verifies strictly on
// its own, and --since a checkpoint saved before exits 4 with
// not-extension.
func TestLedgerVerifySince_Rewritten(t *testing.T) {
	s := signedLedger(t, 30, 15, 30)
	saved := saveNote(t, s.Notes[17])
	forged := forge(t, s, func(es []map[string]any) []map[string]any {
		data := es[10]["data"].(map[string]any)
		data["text"] = "nothing happened here"
		return es
	})
	r := run(t, "ledger", "verify", "--strict", "--ledger", forged)
	r.wantCode(t, cli.ExitOK) // the chain alone cannot tell
	run(t, "ledger", "checkpoint", "--ledger", forged).wantCode(t, cli.ExitOK)
	r = run(t, "ledger", "verify", "--strict", "--since", saved, "--ledger", forged)
	r.wantCode(t, cli.ExitIntegrity)
	r.wantOut(t, "not-extension", "NOT an append-only extension")
	r = run(t, "ledger", "verify", "--json", "--since", saved, "--key", s.Key.String(), "--ledger", forged)
	r.wantCode(t, cli.ExitIntegrity)
	wantOnlyKind(t, r, "not-extension")
	// A proof of the forged entry against the saved checkpoint fails too.
	r = run(t, "ledger", "prove", "10", "--checkpoint", saved, "--ledger", forged)
	r.wantCode(t, cli.ExitIntegrity)
}

// TestLedgerVerifySince_Truncated: the tail cut off (below the saved
// checkpoint) with the head in meta fixed: the ledger verifies on its
// own, and --since exits 4 with not-extension.
func TestLedgerVerifySince_Truncated(t *testing.T) {
	s := signedLedger(t, 30, 15, 30)
	saved := saveNote(t, s.Notes[33])
	forged := forge(t, s, func(es []map[string]any) []map[string]any { return es[:25] })
	run(t, "ledger", "verify", "--strict", "--ledger", forged).wantCode(t, cli.ExitOK)
	r := run(t, "ledger", "verify", "--since", saved, "--ledger", forged)
	r.wantCode(t, cli.ExitIntegrity)
	r.wantOut(t, "not-extension", "entries were removed (truncated)")
	r = run(t, "ledger", "verify", "--json", "--since", saved, "--ledger", forged)
	wantOnlyKind(t, r, "not-extension")
}
