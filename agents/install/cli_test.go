package install_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/opx-dev/opx/agents/codextrust"
	"github.com/opx-dev/opx/agents/hookproto"
	"github.com/opx-dev/opx/agents/install"
	"github.com/opx-dev/opx/internal/agenttest"
)

// recordingOpx writes, as DIR/opx, a hook script that records each
// invocation's stdin and environment in log (and its arguments in
// NNN.args), and returns its path.
func recordingOpx(t *testing.T, log *agenttest.HookLog) string {
	t.Helper()
	script, err := os.ReadFile(log.Command(t, `printf '%s\n' "$*" > "$f.args"; exit 0`))
	must(t, err)
	dir := filepath.Join(t.TempDir(), "bin")
	must(t, os.Mkdir(dir, 0o755))
	p := filepath.Join(dir, "opx")
	must(t, os.WriteFile(p, script, 0o755))
	return p
}

// TestInstall_RealCLIsFire: the configuration Install writes into a
// workspace (for Codex: in the user's settings of the run's home, trusted)
// makes the real Claude Code, Gemini CLI and Codex CLI run the hook
// command, with `hook AGENT`, at every event opx installs, in a run with
// a shell call that succeeds and one that fails.
func TestInstall_RealCLIsFire(t *testing.T) {
	for _, tc := range []struct {
		cli    agenttest.CLI
		server func(testing.TB, ...agenttest.Turn) *agenttest.Server
		// want are the events the run reaches: every one opx installs
		// (Claude's PostToolUseFailure fires for the failing command).
		want []string
	}{
		{agenttest.Claude, agenttest.NewAnthropic, []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure", "Stop", "SessionEnd"}},
		{agenttest.Gemini, agenttest.NewGemini, []string{"SessionStart", "BeforeAgent", "BeforeTool", "AfterTool", "AfterAgent", "SessionEnd"}},
		{agenttest.Codex, agenttest.NewOpenAI, []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd"}},
	} {
		t.Run(string(tc.cli), func(t *testing.T) {
			agenttest.Program(t, tc.cli) // skip (or fail on CI) before anything else
			isolate(t)
			ws := t.TempDir()
			log := agenttest.NewHookLog(t)
			exe := recordingOpx(t, log)
			agent := hookproto.Agent(tc.cli)
			o := agenttest.Options{Dir: ws}
			if tc.cli == agenttest.Codex {
				// Codex: the user's hooks.json in the run's own home,
				// trusted by the codex that runs, with its environment.
				argv, _ := agenttest.Program(t, tc.cli)
				o.Prepare = func(home string, env []string) error {
					t.Setenv("CODEX_HOME", filepath.Join(home, ".codex"))
					_, err := install.Install(context.Background(), install.Options{Agent: agent, Scope: install.User, Exe: exe,
						Codex: &codextrust.Server{Argv: argv, Env: env, Dir: ws}})
					return err
				}
			} else if _, err := install.Install(context.Background(), install.Options{Agent: agent, Scope: install.Project(ws), Exe: exe}); err != nil {
				t.Fatal(err)
			}
			srv := tc.server(t, agenttest.Shell("echo fired > shell.txt"), agenttest.Shell("exit 3"))
			res := agenttest.Run(t, tc.cli, srv, o)
			if res.Err != nil {
				t.Fatalf("%s: %v\nstdout: %.2000s\nstderr: %.2000s", tc.cli, res.Err, res.Stdout, res.Stderr)
			}
			var names []string
			for _, e := range log.Events(t) {
				if !slices.Contains(names, e.Name()) {
					names = append(names, e.Name())
				}
				if strings.HasSuffix(e.Name(), "Tool") || strings.HasSuffix(e.Name(), "ToolUse") {
					if e.Tool() != map[agenttest.CLI]string{agenttest.Claude: "Bash", agenttest.Codex: "Bash", agenttest.Gemini: "run_shell_command"}[tc.cli] {
						t.Errorf("%s for tool %q", e.Name(), e.Tool())
					}
				}
			}
			for _, e := range tc.want {
				if !slices.Contains(names, e) {
					t.Errorf("no %s hook ran; ran %q", e, names)
				}
			}
			args, _ := filepath.Glob(filepath.Join(log.Dir, "*.args"))
			if len(args) == 0 {
				t.Fatal("no hook recorded its arguments")
			}
			for _, a := range args {
				if b, _ := os.ReadFile(a); strings.TrimSpace(string(b)) != "hook "+string(tc.cli) {
					t.Errorf("hook arguments %q, want %q", b, "hook "+string(tc.cli))
				}
			}
			if b, err := os.ReadFile(filepath.Join(ws, "shell.txt")); err != nil || string(b) != "fired\n" {
				t.Errorf("the shell call did not run: %q %v", b, err)
			}
		})
	}
}
