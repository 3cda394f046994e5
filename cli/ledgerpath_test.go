package cli_test

import (
	"path/filepath"
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
		{"env beats workspace", env, []string{"ledger", "head", "--workspace", ws}, env},
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
