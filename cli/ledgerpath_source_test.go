package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opx-dev/opx/cli"
	"github.com/opx-dev/opx/ledger/ledgertest"
)

// TestLedgerPath_Source: --source ID names the collector's mirror of a
// source ledger in --store (or $OPX_FLEET_STORE), for every review
// command, and refuses what would leave it ambiguous or outside the store.
func TestLedgerPath_Source(t *testing.T) {
	t.Setenv(cli.EnvLedger, "")
	store := t.TempDir()
	const id = "00112233445566778899aabbccddeeff"
	path := cli.SourceLedgerPath(store, id)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	newLedgerAt(t, path)
	if path != filepath.Join(store, "sources", id, "ledger.db") {
		t.Fatalf("source path %s", path)
	}
	t.Run("store flag", func(t *testing.T) {
		t.Setenv(cli.EnvFleetStore, "")
		r := run(t, "ledger", "head", "--source", id, "--store", store, "--json")
		r.wantCode(t, cli.ExitOK)
		if got := r.jsonObject(t)["path"]; got != path {
			t.Errorf("path %v, want %s", got, path)
		}
	})
	t.Run("store env, global source", func(t *testing.T) {
		t.Setenv(cli.EnvFleetStore, store)
		r := run(t, "--source", id, "ledger", "head", "--json")
		r.wantCode(t, cli.ExitOK)
		if got := r.jsonObject(t)["path"]; got != path {
			t.Errorf("path %v, want %s", got, path)
		}
	})
	t.Run("review commands", func(t *testing.T) {
		t.Setenv(cli.EnvFleetStore, store)
		for _, args := range [][]string{{"sessions"}, {"metrics"}, {"ledger", "verify"}} {
			r := run(t, append(args, "--source", id)...)
			r.wantCode(t, cli.ExitOK)
		}
	})
	for _, tt := range []struct {
		name string
		env  string
		args []string
		err  string
	}{
		{"no store", "", []string{"ledger", "head", "--source", id}, "--store DIR"},
		{"not an id", store, []string{"ledger", "head", "--source", "../../etc"}, "not a ledger id"},
		{"upper case id", store, []string{"ledger", "head", "--source", strings.ToUpper(id)}, "not a ledger id"},
		{"with ledger", store, []string{"ledger", "head", "--source", id, "--ledger", path}, "give one of them"},
		{"with workspace", store, []string{"ledger", "head", "--source", id, "--workspace", "."}, "give one of them"},
		{"empty store", "", []string{"ledger", "head", "--source", id, "--store", ""}, "--store needs a directory"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(cli.EnvFleetStore, tt.env)
			r := run(t, tt.args...)
			r.wantCode(t, cli.ExitUsage)
			r.wantErr(t, tt.err)
		})
	}
	t.Run("unknown source", func(t *testing.T) {
		r := run(t, "ledger", "head", "--source", "ffffffffffffffffffffffffffffffff", "--store", store)
		r.wantCode(t, cli.ExitError)
		r.wantErr(t, "no ledger at")
	})
	ledgertest.MustVerify(t, path)
}

// TestLedgerPath_Source_NotAnExport: --source names the ledger, so an
// EXPORT argument beside it is one ledger too many.
func TestLedgerPath_Source_NotAnExport(t *testing.T) {
	store := t.TempDir()
	const id = "00112233445566778899aabbccddeeff"
	r := run(t, "ledger", "verify", "x.export", "--source", id, "--store", store)
	r.wantCode(t, cli.ExitUsage)
	r.wantErr(t, "not both")
}

// TestReport_Source_ReadsNoWorkspace: a report on a collector's mirror
// never reads the workspace path the source recorded: that path names a
// directory on the source's machine, and here it is someone else's (a
// hostile source could name any local directory for its content to
// appear in a report). --workspace still names one explicitly.
func TestReport_Source_ReadsNoWorkspace(t *testing.T) {
	store := t.TempDir()
	path := cli.SourceLedgerPath(store, sampleLedgerID)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	ledgertest.Copy(t, replaySample(t), path)
	out := filepath.Join(t.TempDir(), "fix.html")
	run(t, "report", "ses_02f8c314", "-o", out, "--source", sampleLedgerID, "--store", store).wantCode(t, cli.ExitOK)
	if html := readReport(t, out); !strings.Contains(html, "The session ran on another machine (--source): no workspace was read") {
		t.Errorf("the report on a mirror does not say it read no workspace")
	}
}

// TestRollback_Source_Refused: rollback never works on a mirror (never
// written) nor in the workspace its source recorded (another machine's
// path, here someone else's directory).
func TestRollback_Source_Refused(t *testing.T) {
	store := t.TempDir()
	for _, args := range [][]string{
		{"rollback", "--source", sampleLedgerID, "--store", store, "--session", "ses_02f8c314"},
		{"rollback", "--source", sampleLedgerID, "--store", store, "--dry-run", "--workspace", t.TempDir(), "--session", "ses_02f8c314"},
	} {
		r := run(t, args...)
		r.wantCode(t, cli.ExitUsage)
		r.wantErr(t, "rollback works on a workspace's own ledger")
	}
}
