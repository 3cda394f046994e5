package main_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opx-dev/opx/agents/unrecorded"
)

// End-to-end tests of `opx hook AGENT` as a coding agent's CLI runs it:
// the real binary, the event on its stdin, and only its exit status,
// stdout and stderr read, as the CLI reads them.

// hook runs `opx hook AGENT ARGS...` in the world with stdin.
func (w *world) hook(agent string, stdin []byte, args ...string) (string, string, int) {
	w.t.Helper()
	return w.runHookProgram(append([]string{w.bin, "hook", agent}, args...), stdin)
}

// runHookProgram runs a hook's command line argv in the world with stdin
// and the CLIs' project-dir variables unset, as a CLI would run it, and
// returns its stdout, stderr and exit status.
func (w *world) runHookProgram(argv []string, stdin []byte) (string, string, int) {
	w.t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(w.env(), "CLAUDE_PROJECT_DIR=", "GEMINI_PROJECT_DIR=")
	cmd.Stdin = bytes.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return out.String(), errOut.String(), 0
	case errors.As(err, &exit):
		return out.String(), errOut.String(), exit.ExitCode()
	}
	w.t.Fatalf("run %v: %v", argv, err)
	return "", "", -1
}

// preToolEvent is a shell call as agent's CLI sends it before running it.
func preToolEvent(agent, cwd string) []byte {
	m := map[string]any{"session_id": "sess-e2e", "transcript_path": "/nonexistent/t.jsonl", "cwd": cwd,
		"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_use_id": "toolu_1", "tool_input": map[string]any{"command": "make"}}
	if agent == "gemini" {
		m["hook_event_name"], m["tool_name"] = "BeforeTool", "run_shell_command"
		delete(m, "tool_use_id")
	}
	b, _ := json.Marshal(m)
	return b
}

// TestOpx_Hook_FailClosed: what each CLI reads from the binary when no
// engine can start (its log cannot be opened), when the call's directory
// is in no workspace, and when the event is garbage: a denial in its
// format, by exit 2 (Claude Code, Codex CLI) or on stdout (Gemini CLI).
// With hooks.on_engine_down: allow, exit 0, nothing on stdout, and the
// call written down.
func TestOpx_Hook_FailClosed(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	if err := os.MkdirAll(filepath.Join(w.ws, ".opx"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(w.stateDir(), "engine.log"), 0o700); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	for _, agent := range []string{"claude", "codex", "gemini"} {
		for _, tc := range []struct {
			name   string
			stdin  []byte
			reason string
		}{
			{"engine down", preToolEvent(agent, w.ws), "no engine:"},
			{"no workspace", preToolEvent(agent, outside), "is in no opx workspace"},
			{"garbage", []byte("\x00\xff{"), "malformed hook event"},
		} {
			stdout, stderr, code := w.hook(agent, tc.stdin)
			reason := stderr
			if agent == "gemini" {
				var d struct{ Decision, Reason string }
				if code != 0 || json.Unmarshal([]byte(stdout), &d) != nil || d.Decision != "deny" {
					t.Errorf("%s %s: exit %d, stdout %q; want 0 and a denial", agent, tc.name, code, stdout)
				}
				reason = d.Reason
			} else if code != 2 || stdout != "" {
				t.Errorf("%s %s: exit %d, stdout %q; want 2 and none", agent, tc.name, code, stdout)
			}
			if !strings.Contains(reason, tc.reason) {
				t.Errorf("%s %s: reason %q lacks %q", agent, tc.name, reason, tc.reason)
			}
		}
	}
	if stdout, _, code := w.hook("cursor", preToolEvent("claude", w.ws)); code != 2 || stdout != "" {
		t.Errorf("an unknown agent: exit %d, stdout %q; want 2 (a denial to any CLI)", code, stdout)
	}

	if err := os.WriteFile(filepath.Join(w.ws, ".opx", "config.yaml"), []byte("hooks:\n  on_engine_down: allow\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, agent := range []string{"claude", "codex", "gemini"} {
		stdout, stderr, code := w.hook(agent, preToolEvent(agent, w.ws))
		if code != 0 || stdout != "" || !strings.Contains(stderr, "written down") {
			t.Errorf("%s, on_engine_down allow: exit %d, stdout %q, stderr %q; want 0, none, written down", agent, code, stdout, stderr)
		}
	}
	b, err := os.ReadFile(filepath.Join(w.stateDir(), unrecorded.File))
	if err != nil || strings.Count(string(b), "\n") != 3 {
		t.Errorf("written down: %q, %v; want 3 lines", b, err)
	}
}
