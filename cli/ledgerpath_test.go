package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opx-dev/opx/cli"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/ledgertest"
)

func TestLedgerPath_Resolution(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	t.Setenv(cli.EnvLedger, "")
	ws := t.TempDir()
	id, err := ledger.WorkspaceID(ws)
	if err != nil {
		t.Fatal(err)
	}
	wsLedger := newLedgerAt(t, filepath.Join(state, "opx", id, "ledger.db"))
	cwdID, err := ledger.WorkspaceID(".")
	if err != nil {
		t.Fatal(err)
	}
	cwdLedger := newLedgerAt(t, filepath.Join(state, "opx", cwdID, "ledger.db"))
	global, local, env := newLedger(t, 1).Path, newLedger(t, 1).Path, newLedger(t, 1).Path

	tests := []struct {
		name string
		env  string
		args []string
		want string
	}{
		{"current directory", "", []string{"ledger", "head"}, cwdLedger},
		{"workspace", "", []string{"ledger", "head", "--workspace", ws}, wsLedger},
		{"global workspace", "", []string{"--workspace", ws, "ledger", "head"}, wsLedger},
		{"env when no flag", env, []string{"ledger", "head"}, env},
		{"workspace beats env", env, []string{"ledger", "head", "--workspace", ws}, wsLedger},
		{"global workspace beats env", env, []string{"--workspace", ws, "ledger", "head"}, wsLedger},
		{"ledger and its own workspace agree", "", []string{"ledger", "head", "--ledger", wsLedger, "--workspace", ws}, wsLedger},
		{"flag beats env", env, []string{"ledger", "head", "--ledger", local}, local},
		{"global flag", "", []string{"--ledger", global, "ledger", "head"}, global},
		{"command flag beats global", "", []string{"--ledger", global, "ledger", "head", "--ledger", local}, local},
		{"flag with =", "", []string{"ledger", "head", "--ledger=" + local}, local},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(cli.EnvLedger, tt.env)
			r := run(t, append(tt.args, "--json")...)
			r.wantCode(t, cli.ExitOK)
			if got := r.jsonObject(t)["path"]; got != tt.want {
				t.Errorf("path %v, want %s", got, tt.want)
			}
		})
	}
}

// TestLedgerPath_Contradiction: --ledger and --workspace naming two
// different ledgers is a usage error wherever each is given, with or
// without $OPX_LEDGER; one of them used to be ignored without a word.
func TestLedgerPath_Contradiction(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	ws := t.TempDir()
	other := newLedger(t, 1).Path
	for _, env := range []string{"", newLedger(t, 1).Path} {
		for _, args := range [][]string{
			{"ledger", "head", "--ledger", other, "--workspace", ws},
			{"--ledger", other, "ledger", "head", "--workspace", ws},
			{"--workspace", ws, "ledger", "verify", "--ledger", other},
			{"sessions", "--ledger", other, "--workspace", ws},
			{"replay", "ses_x", "--ledger", other, "--workspace", ws},
		} {
			t.Run(strings.Join(args, " ")+" env="+env, func(t *testing.T) {
				t.Setenv(cli.EnvLedger, env)
				r := run(t, args...)
				r.wantCode(t, cli.ExitUsage)
				r.wantErr(t, "name different ledgers")
			})
		}
	}
}

// TestLedgerPath_WorkspaceOnlyCommands: commands that work on the
// workspace's engine offer no --ledger and refuse one given before them.
func TestLedgerPath_WorkspaceOnlyCommands(t *testing.T) {
	t.Setenv(cli.EnvLedger, "")
	ws := t.TempDir()
	for _, cmd := range []string{"init", "start", "stop", "restart", "status", "send", "chat", "approve", "deny", "demo", "version"} {
		t.Run(cmd, func(t *testing.T) {
			h := run(t, cmd, "--help")
			h.wantCode(t, cli.ExitOK)
			if strings.Contains(h.stdout, "--ledger") {
				t.Errorf("opx %s --help offers --ledger:\n%s", cmd, h.stdout)
			}
			args := []string{"--ledger", filepath.Join(ws, "x.db"), cmd}
			if cmd != "version" {
				args = append(args, "--workspace", ws)
			}
			r := run(t, args...)
			r.wantCode(t, cli.ExitUsage)
			r.wantErr(t, "--ledger does not apply to opx "+cmd)
			if _, err := os.Stat(filepath.Join(ws, ".opx")); err == nil {
				t.Errorf("opx %s ran despite the refused --ledger", cmd)
			}
		})
	}
}

func TestLedgerPath_MissingWorkspace(t *testing.T) {
	t.Setenv(cli.EnvLedger, "")
	r := run(t, "ledger", "head", "--workspace", filepath.Join(t.TempDir(), "gone"))
	r.wantCode(t, cli.ExitError)
	r.wantErr(t, "workspace")
}

// newLedgerAt makes a one-entry ledger at path (Create makes the
// directories).
func newLedgerAt(t *testing.T, path string) string {
	t.Helper()
	return ledgertest.New(t, path, 1).Path
}
