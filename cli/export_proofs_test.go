package cli_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/opx-dev/opx/cli"
	"github.com/opx-dev/opx/ledger/tlog"
)

// TestLedgerVerify_ExportKey: a session export of a signing ledger proves
// its place with the bundled checkpoint; verify says whether the key was
// pinned (--key) or bundled, refuses another key (exit 4), a malformed
// key (exit 2), and --key without an EXPORT (exit 2).
func TestLedgerVerify_ExportKey(t *testing.T) {
	sr := newSignedReview(t, false)
	out := filepath.Join(t.TempDir(), "a.jsonl.zst")
	run(t, "ledger", "export", "--ledger", sr.path, "--session", "ses_a", "-o", out).wantCode(t, cli.ExitOK)
	r := run(t, "ledger", "verify", out)
	r.wantCode(t, cli.ExitOK)
	r.wantOut(t, "signed checkpoint: tree", "the key bundled with the export", "pin the ledger's key from elsewhere with --key")
	r = run(t, "ledger", "verify", out, "--key", sr.vkey)
	r.wantCode(t, cli.ExitOK)
	r.wantOut(t, "the key given with --key", "proved in it by inclusion")
	js := run(t, "ledger", "verify", out, "--key", sr.vkey, "--json").jsonObject(t)
	if p, _ := js["proved"].(map[string]any); p["key_pinned"] != true {
		t.Errorf("proved %v", js["proved"])
	}
	_, other, _ := tlog.GenerateKey("opx.local/ledger/00000000000000000000000000000000")
	r = run(t, "ledger", "verify", out, "--key", other)
	r.wantCode(t, cli.ExitIntegrity)
	r.wantOut(t, "checkpoint")
	run(t, "ledger", "verify", out, "--key", "junk").wantCode(t, cli.ExitUsage)
	run(t, "ledger", "verify", "--ledger", sr.path, "--key", sr.vkey).wantCode(t, cli.ExitUsage)
}

// TestLedgerExport_Tiles: export --tiles writes the static tree once,
// refuses an existing directory and -o beside it.
func TestLedgerExport_Tiles(t *testing.T) {
	sr := newSignedReview(t, false)
	dir := filepath.Join(t.TempDir(), "tiles")
	r := run(t, "ledger", "export", "--ledger", sr.path, "--tiles", dir)
	r.wantCode(t, cli.ExitOK)
	r.wantOut(t, "wrote "+dir+": tree 14")
	if _, err := os.Stat(filepath.Join(dir, "checkpoint")); err != nil {
		t.Error(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "tile", "0", "000.p", "14")); err != nil {
		t.Error(err)
	}
	run(t, "ledger", "export", "--ledger", sr.path, "--tiles", dir).wantCode(t, cli.ExitError)
	run(t, "ledger", "export", "--ledger", sr.path, "--tiles", dir+"2", "-o", dir+".jsonl").wantCode(t, cli.ExitUsage)
}
