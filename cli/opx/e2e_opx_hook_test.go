package main_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// End-to-end tests of the small opx-hook binary as a coding agent's CLI
// runs it: the same answers and records as opx hook (both run
// cli/internal/hookrun), against a real engine, and the engine started
// through the opx beside it when none runs.

// opxHook runs `opx-hook AGENT --workspace WS` in the world with stdin.
func (w *world) opxHook(bin, agent string, stdin []byte) (string, string, int) {
	w.t.Helper()
	return w.runHookProgram([]string{bin, agent, "--workspace", w.ws}, stdin)
}

// readEvent is Claude Code's pre-tool event of a Read of the world's
// README.md.
func (w *world) readEvent(id string) []byte {
	b, _ := json.Marshal(map[string]any{"session_id": "sess-opx-hook", "transcript_path": "/nonexistent/t.jsonl", "cwd": w.ws,
		"hook_event_name": "PreToolUse", "tool_name": "Read", "tool_use_id": id,
		"tool_input": map[string]any{"file_path": filepath.Join(w.ws, "README.md")}})
	return b
}

// wantHookRecords fails the test unless the world's ledger (the engine
// stopped) verifies strictly and holds a hook session's call judged and
// started.
func wantHookRecords(t *testing.T, w *world) {
	t.Helper()
	types := w.types(filepath.Join(w.stateDir(), "ledger.db"))
	for _, want := range []string{"session.created", "hook.session", "hook.tool_call", "tool.proposed", "shield.verdict", "exec.started"} {
		if !slices.Contains(types, want) {
			t.Errorf("the ledger has no %s: %v", want, types)
		}
	}
}

// TestOpxHook_RealEngine: opx-hook's answer to a read, and its record,
// from the workspace's running engine; a credential read is denied in
// Claude Code's format (exit 2, the reason on stderr).
func TestOpxHook_RealEngine(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	bin := buildHook(t)
	if err := os.MkdirAll(filepath.Join(w.ws, ".opx"), 0o755); err != nil {
		t.Fatal(err)
	}
	m := w.start()
	stdout, stderr, code := w.opxHook(bin, "claude", w.readEvent("toolu_read"))
	if code != 0 || stdout != "" {
		t.Fatalf("a read: exit %d, stdout %q; want 0 and none (allowed)\nstderr: %s", code, stdout, stderr)
	}
	cred, _ := json.Marshal(map[string]any{"session_id": "sess-opx-hook", "transcript_path": "/nonexistent/t.jsonl", "cwd": w.ws,
		"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_use_id": "toolu_cred",
		"tool_input": map[string]any{"command": "cat ~/.ssh/id_rsa"}})
	stdout, stderr, code = w.opxHook(bin, "claude", cred)
	if code != 2 || stdout != "" || !strings.Contains(stderr, "credential") {
		t.Errorf("a credential read: exit %d, stdout %q, stderr %q; want 2, none, the reason", code, stdout, stderr)
	}
	w.stop(m)
	wantHookRecords(t, w)
}

// TestOpxHook_StartsEngine: with no engine running, opx-hook starts one
// with the opx beside it (opx start, in the background), says so on
// stderr, and the call is judged and recorded by it.
func TestOpxHook_StartsEngine(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	bin := buildHook(t)
	if err := os.MkdirAll(filepath.Join(w.ws, ".opx"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.run("stop") })
	stdout, stderr, code := w.opxHook(bin, "claude", w.readEvent("toolu_started"))
	if code != 0 || stdout != "" {
		t.Fatalf("a read: exit %d, stdout %q; want 0 and none (allowed)\nstderr: %s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "no engine runs for "+w.ws+"; starting one in the background") || !strings.Contains(stderr, "engine running on") {
		t.Errorf("stderr does not say an engine was started:\n%s", stderr)
	}
	if st, code := w.status(); code != 0 || !st.Running {
		t.Fatalf("opx status after the hook: %d %+v; want an engine running", code, st)
	}
	if out, errOut, code := w.run("stop"); code != 0 {
		t.Fatalf("opx stop: %d\n%s%s", code, out, errOut)
	}
	wantHookRecords(t, w)
}

// TestOpxHook_AgentsInstall: `opx agents install` writes the opx-hook
// beside the opx that runs, and says why; without one, `opx hook`, and
// says how to get the faster one, replacing the opx-hook's hooks.
func TestOpxHook_AgentsInstall(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	hook := buildHook(t)
	dir := t.TempDir()
	for _, b := range []string{w.bin, hook} {
		dst := filepath.Join(dir, filepath.Base(b))
		if err := os.Link(b, dst); err != nil {
			data, rerr := os.ReadFile(b)
			if rerr != nil || os.WriteFile(dst, data, 0o755) != nil {
				t.Fatalf("copy %s: %v %v", b, err, rerr)
			}
		}
	}
	opx := filepath.Join(dir, "opx")
	install := func() string {
		t.Helper()
		cmd := exec.Command(opx, "agents", "install", "claude", "--workspace", w.ws)
		cmd.Env = append(w.env(), "HOME="+t.TempDir(), "CLAUDE_CONFIG_DIR=")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("opx agents install: %v\n%s", err, out)
		}
		return string(out)
	}
	settings := filepath.Join(w.ws, ".claude", "settings.json")
	out := install()
	if want := "claude runs: " + filepath.Join(dir, "opx-hook") + " claude\n    (the opx-hook beside this opx:"; !strings.Contains(out, want) {
		t.Errorf("install beside opx-hook:\n%s\nwant %q", out, want)
	}
	if b, _ := os.ReadFile(settings); !strings.Contains(string(b), filepath.Join(dir, "opx-hook")+" claude\"") {
		t.Errorf("the settings do not run opx-hook:\n%s", b)
	}
	if err := os.Remove(filepath.Join(dir, "opx-hook")); err != nil {
		t.Fatal(err)
	}
	out = install()
	for _, want := range []string{"replacing 7 older opx hooks", "claude runs: " + opx + " hook claude\n    (this opx: no opx-hook beside it"} {
		if !strings.Contains(out, want) {
			t.Errorf("install without opx-hook:\n%s\nwant %q", out, want)
		}
	}
}
