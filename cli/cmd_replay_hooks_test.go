package cli_test

import (
	"path/filepath"
	"testing"

	"github.com/opx-dev/opx/cli"
	"github.com/opx-dev/opx/replay/replaytest"
)

// hookLedger writes the hook scene (a Claude Code session audited through
// its hooks) as a real ledger file and returns its path and seqs.
func hookLedger(t *testing.T) (string, map[string]uint64) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ledger.db")
	return path, replaytest.Write(t, path, replaytest.HookScene())
}

func TestReplay_Hooks_Timeline(t *testing.T) {
	path, _ := hookLedger(t)
	r := run(t, "replay", replaytest.HookSession, "--ledger", path)
	r.wantCode(t, cli.ExitOK)
	t.Log(r.stdout)
}
