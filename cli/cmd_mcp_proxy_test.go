package cli_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/opx-dev/opx/cli"
)

// TestMCPProxy_Usage: what opx mcp-proxy refuses before it talks to an
// engine (exit 2, stdout untouched: it is the MCP client's).
func TestMCPProxy_Usage(t *testing.T) {
	ws := t.TempDir()
	os.MkdirAll(filepath.Join(ws, ".opx"), 0o755)
	os.WriteFile(filepath.Join(ws, ".opx", "config.yaml"), []byte("mcp:\n  servers:\n    fs:\n      command: /bin/true\n"), 0o644)
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"nothing", []string{"mcp-proxy", "--workspace", ws}, "missing SERVER"},
		{"two servers", []string{"mcp-proxy", "--workspace", ws, "fs", "other"}, "unexpected argument"},
		{"not configured", []string{"mcp-proxy", "--workspace", ws, "nosuch"}, `no MCP server "nosuch" is configured`},
		{"sandbox flags on a name", []string{"mcp-proxy", "--workspace", ws, "--writable", "fs"}, "--writable and --network are for -- COMMAND"},
		{"a server then a command", []string{"mcp-proxy", "--workspace", ws, "fs", "--", "x"}, "unexpected argument"},
		{"an unset --env", []string{"mcp-proxy", "--workspace", ws, "--env", "OPX_TEST_SURELY_UNSET", "--", "x"}, "OPX_TEST_SURELY_UNSET: the variable is not set"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, tc.args...)
			r.wantCode(t, cli.ExitUsage)
			r.wantErr(t, tc.want)
			if r.stdout != "" {
				t.Errorf("stdout is the MCP client's, yet: %q", r.stdout)
			}
		})
	}
}
