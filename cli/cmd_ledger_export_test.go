package cli_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/opx-dev/opx/cli"
	"github.com/opx-dev/opx/engine/checkpoint"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/ledgertest"
)

func TestLedgerExport_RoundTrip(t *testing.T) {
	lg := newLedger(t, 25)
	for _, name := range []string{"out.jsonl", "out.jsonl.zst"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, name)
			r := run(t, "ledger", "export", "--ledger", lg.Path, "-o", out)
			r.wantCode(t, cli.ExitOK)
			r.wantOut(t, "wrote "+out+": entries 0..25 (26 entries)",
				"wrote "+ledger.BundlePath(out)+": 6 blobs and manifest.json",
				"head 25 "+lg.Head.Hash.String())

			dst := filepath.Join(dir, "imported.db")
			r = run(t, "ledger", "import", out, "--ledger", dst)
			r.wantCode(t, cli.ExitOK)
			r.wantOut(t, "26 entries, head 25 "+lg.Head.Hash.String())

			r = run(t, "ledger", "verify", "--strict", "--ledger", dst)
			r.wantCode(t, cli.ExitOK)
			r.wantOut(t, "ok: 26 entries, head 25 "+lg.Head.Hash.String())
		})
	}
}

func TestLedgerExport_Session(t *testing.T) {
	lg := newLedger(t, 9)
	out := filepath.Join(t.TempDir(), "s1.jsonl")
	r := run(t, "ledger", "export", "--ledger", lg.Path, "-o", out, "--session", "s1")
	r.wantCode(t, cli.ExitOK)
	// s1 holds entries 1, 4 and 7; the segment runs 1..7 through s2's
	// and unsessioned entries.
	r.wantOut(t, `segment of session "s1", entries 1..7 (7 entries)`,
		"entries of other sessions inside that range are included",
		"prev (hash of entry 0): ", "last (hash of entry 7): ")
}

func TestLedgerExport_JSON(t *testing.T) {
	lg := newLedger(t, 6)
	out := filepath.Join(t.TempDir(), "x.jsonl")
	r := run(t, "ledger", "export", "--json", "--ledger", lg.Path, "-o", out, "--session", "s2")
	r.wantCode(t, cli.ExitOK)
	m := r.jsonObject(t)
	// A segment carries the tree's compact range at its start; this
	// ledger signs no checkpoints, so no checkpoint, key or proofs.
	want := []string{"blobs", "entries", "format", "from_seq", "head_hash", "head_seq", "last_hash", "ledger_id", "prev", "session", "to_seq", "tree_range"}
	if got := keys(m); !reflect.DeepEqual(got, want) {
		t.Errorf("manifest keys %v, want %v", got, want)
	}
	if m["session"] != "s2" || m["from_seq"].(jsonNumber).String() != "2" || m["to_seq"].(jsonNumber).String() != "5" {
		t.Errorf("manifest %v, want session s2 from 2 to 5", m)
	}
}

func TestLedgerExport_Errors(t *testing.T) {
	lg := newLedger(t, 4)
	dir := t.TempDir()
	exists := filepath.Join(dir, "exists.jsonl")
	if err := os.WriteFile(exists, []byte("x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := tampered(t, lg.Path, 2)
	tests := []struct {
		name string
		args []string
		code int
		err  string
	}{
		{"no output", []string{"--ledger", lg.Path}, cli.ExitUsage, "missing -o FILE"},
		{"extra argument", []string{"--ledger", lg.Path, "-o", filepath.Join(dir, "a.jsonl"), "more"}, cli.ExitUsage, "unexpected argument"},
		{"output exists", []string{"--ledger", lg.Path, "-o", exists}, cli.ExitError, "already exists"},
		{"unknown session", []string{"--ledger", lg.Path, "-o", filepath.Join(dir, "b.jsonl"), "--session", "nobody"}, cli.ExitError, "not found"},
		{"damaged ledger", []string{"--ledger", bad, "-o", filepath.Join(dir, "c.jsonl")}, cli.ExitIntegrity, "export refused, ledger is damaged"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, append([]string{"ledger", "export"}, tt.args...)...)
			r.wantCode(t, tt.code)
			r.wantErr(t, tt.err)
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "c.jsonl")); err == nil {
		t.Error("a damaged ledger was exported")
	}
}

// TestLedgerExport_TilesThroughEngine: while an engine holds a signing
// ledger, export --tiles reads it through the engine and writes the same
// files as an offline export of a copy at the same head.
func TestLedgerExport_TilesThroughEngine(t *testing.T) {
	s := signedLedger(t, 300, 100)
	serveLedgerWith(t, s.Path, checkpoint.NewKeeper(s.Dir))
	live, off := t.TempDir(), t.TempDir()
	r := run(t, "ledger", "export", "--tiles", filepath.Join(live, "tiles"), "--ledger", s.Path)
	r.wantCode(t, cli.ExitOK)
	r.wantOut(t, "and its signed checkpoint")
	copied := ledgertest.Copy(t, s.Path, filepath.Join(off, "ledger.db")) // the engine is quiet: the file is its durable state
	o := run(t, "ledger", "export", "--tiles", filepath.Join(off, "tiles"), "--ledger", copied)
	o.wantCode(t, cli.ExitOK)
	if r.stdout != strings.ReplaceAll(o.stdout, off, live) {
		t.Errorf("through the engine:\n%s\noffline:\n%s", r.stdout, o.stdout)
	}
	sameFiles(t, filepath.Join(live, "tiles"), filepath.Join(off, "tiles"))
}
