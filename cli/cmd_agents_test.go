package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opx-dev/opx/cli"
	"github.com/opx-dev/opx/internal/agenttest"
)

// agentsEnv isolates the agents' user settings and opx's state, and
// returns a workspace and an executable named opx for --command.
func agentsEnv(t *testing.T) (ws, opx string) {
	t.Helper()
	home := t.TempDir()
	for k, v := range map[string]string{"HOME": home, "XDG_STATE_HOME": t.TempDir(), "CLAUDE_CONFIG_DIR": "", "CODEX_HOME": "",
		"GEMINI_CLI_HOME": "", "GEMINI_CLI_TRUST_WORKSPACE": "true", "NO_COLOR": "1", "OPX_LEDGER": ""} {
		t.Setenv(k, v)
	}
	ws = t.TempDir()
	opx = filepath.Join(t.TempDir(), "opx")
	if err := os.WriteFile(opx, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return ws, opx
}

func TestAgentsInstall_ClaudeRoundTrip(t *testing.T) {
	ws, opx := agentsEnv(t)
	settings := filepath.Join(ws, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
		t.Fatal(err)
	}
	orig := `{"permissions": {"allow": ["Bash(ls)"]}, "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard"}]}]}}`
	if err := os.WriteFile(settings, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, "agents", "install", "claude", "--workspace", ws, "--command", opx)
	r.wantCode(t, cli.ExitOK)
	r.wantOut(t, "wrote "+settings, "claude runs: "+opx+" hook claude\n    (given by --command)", "PostToolUseFailure")
	first, _ := os.ReadFile(settings)
	r = run(t, "agents", "install", "claude", "--workspace", ws, "--command", opx)
	r.wantCode(t, cli.ExitOK)
	r.wantOut(t, "already has opx's hooks: unchanged")
	if again, _ := os.ReadFile(settings); string(again) != string(first) {
		t.Errorf("second install changed the file")
	}
	r = run(t, "status", "--workspace", ws, "--json")
	r.wantCode(t, cli.ExitError) // no engine
	var st struct {
		Agents []struct {
			Agent, Scope, Path string
			Installed          bool
			Problems           []string
		} `json:"agents"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil || len(st.Agents) != 1 || st.Agents[0].Path != settings ||
		!st.Agents[0].Installed || len(st.Agents[0].Problems) != 0 || st.Agents[0].Scope != "workspace" {
		t.Errorf("status --json agents: %v %s", err, r.stdout)
	}
	r = run(t, "status", "--workspace", ws)
	r.wantOut(t, "hooks     claude  workspace "+settings+": will run")
	if err := os.Remove(opx); err != nil {
		t.Fatal(err)
	}
	r = run(t, "status", "--workspace", ws)
	r.wantOut(t, "will not run: the hooks run "+opx+", which cannot run")
	r = run(t, "agents", "install", "claude", "--workspace", ws, "--uninstall")
	r.wantCode(t, cli.ExitOK)
	r.wantOut(t, "removed 7 opx hooks for claude from "+settings)
	var got, want any
	b, _ := os.ReadFile(settings)
	if json.Unmarshal(b, &got) != nil || json.Unmarshal([]byte(orig), &want) != nil || asJSONString(got) != asJSONString(want) {
		t.Errorf("after uninstall:\n%s\nwant\n%s", b, orig)
	}
	r = run(t, "agents", "install", "claude", "--workspace", ws, "--uninstall")
	r.wantCode(t, cli.ExitOK)
	r.wantOut(t, "no opx hooks for claude in "+settings+": nothing to do")
	r = run(t, "status", "--workspace", ws)
	r.wantOut(t, "hooks     none (opx agents install")
}

func asJSONString(v any) string { b, _ := json.Marshal(v); return string(b) }

// TestAgentsInstall_GoRunRefused: this test's binary is built by go test:
// without --command, opx refuses to write hooks that would run it.
func TestAgentsInstall_GoRunRefused(t *testing.T) {
	ws, _ := agentsEnv(t)
	r := run(t, "agents", "install", "gemini", "--workspace", ws)
	r.wantCode(t, cli.ExitError)
	r.wantErr(t, "built by go run or go test", "go build -o ~/bin/ ./cli/opx ./cli/opx-hook", "go install ./cli/opx ./cli/opx-hook", "--command PATH")
	if _, err := os.Stat(filepath.Join(ws, ".gemini")); !os.IsNotExist(err) {
		t.Errorf("something was written: %v", err)
	}
}

func TestAgentsInstall_Refusals(t *testing.T) {
	ws, opx := agentsEnv(t)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"agents", "install"}, cli.ExitUsage, "missing AGENT"},
		{[]string{"agents", "install", "cursor", "--command", opx}, cli.ExitUsage, `unknown agent "cursor"`},
		{[]string{"agents", "install", "claude", "extra", "--command", opx}, cli.ExitUsage, `unexpected argument "extra"`},
		{[]string{"agents", "install", "claude", "--user", "--workspace", ws, "--command", opx}, cli.ExitUsage, "--workspace and --user"},
		{[]string{"agents", "install", "claude", "--workspace", ws, "--command", "/no/such/opx"}, cli.ExitError, "unusable hook command"},
		{[]string{"agents", "install", "codex", "--workspace", ws, "--command", opx, "--codex", "/no/such/codex"}, cli.ExitError, "codex not found"},
		{[]string{"agents", "frobnicate"}, cli.ExitUsage, `unknown command "frobnicate"`},
	} {
		r := run(t, tc.args...)
		r.wantCode(t, tc.code)
		r.wantErr(t, tc.want)
	}
	settings := filepath.Join(ws, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
		t.Fatal(err)
	}
	bad := "{\n  // comment\n  \"model\": \"x\"\n}\n"
	if err := os.WriteFile(settings, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, "agents", "install", "claude", "--workspace", ws, "--command", opx)
	r.wantCode(t, cli.ExitError)
	r.wantErr(t, settings, "comments", "left as it is")
	if b, _ := os.ReadFile(settings); string(b) != bad {
		t.Errorf("the refused file changed: %s", b)
	}
}

// TestAgentsInstall_CodexTrust: with the real codex, `opx agents install
// codex --user` writes $CODEX_HOME/hooks.json and records the hooks as
// trusted; status --verbose asks codex and says so, plain status does not
// ask.
func TestAgentsInstall_CodexTrust(t *testing.T) {
	argv, path := agenttest.Program(t, agenttest.Codex)
	ws, opx := agentsEnv(t)
	codexHome := filepath.Join(os.Getenv("HOME"), ".codex")
	t.Setenv("CODEX_HOME", codexHome)
	t.Setenv("PATH", strings.Join(append(path, os.Getenv("PATH")), ":"))
	r := run(t, "agents", "install", "codex", "--user", "--command", opx, "--codex", argv[0])
	r.wantCode(t, cli.ExitOK)
	r.wantOut(t, "wrote "+filepath.Join(codexHome, "hooks.json"), "trusted by Codex (recorded in "+filepath.Join(codexHome, "config.toml"),
		"hooks.json:pre_tool_use:0:0 sha256:", "hooks.json:session_end:0:0 sha256:")
	r = run(t, "status", "--workspace", ws)
	r.wantOut(t, "codex   user      "+filepath.Join(codexHome, "hooks.json")+": will run; codex trust not checked")
	t.Setenv("PATH", filepath.Dir(argv[0])+":"+os.Getenv("PATH")) // codex on PATH for --verbose
	r = run(t, "status", "--workspace", ws, "--verbose")
	r.wantOut(t, "will run; codex trust trusted")
	r = run(t, "agents", "install", "codex", "--workspace", ws, "--command", opx, "--codex", argv[0])
	r.wantCode(t, cli.ExitError)
	r.wantOut(t, "wrote "+filepath.Join(ws, ".codex", "hooks.json"))
	r.wantErr(t, "codex hooks not trusted", "does not trust "+ws, "or install with --user")
}
