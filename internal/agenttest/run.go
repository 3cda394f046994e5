package agenttest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A Hook is one command hook: the CLI's own event name (Claude's and
// Codex's PreToolUse, Gemini's BeforeTool), a tool matcher ("" for
// events without one) and the command.
type Hook struct {
	Event, Matcher, Command string
}

// Options says how to run a CLI once.
type Options struct {
	// Prompt is the user's prompt (default "do the task").
	Prompt string
	// Dir is the working directory (the workspace); default a new
	// t.TempDir(). Nothing of the harness is written into it.
	Dir string
	// Hooks are written into the CLI's user-level settings in the
	// isolated home (Claude's ~/.claude/settings.json, Codex's
	// ~/.codex/hooks.json, trusted as `codex app-server` reports them,
	// Gemini's ~/.gemini/settings.json). None: no hook configuration.
	Hooks []Hook
	// Args are extra arguments for the CLI.
	Args []string
	// Env are extra environment variables (KEY=VALUE).
	Env []string
	// Timeout bounds the run (default 90 s): a CLI that hangs is killed
	// with its process group and the test fails.
	Timeout time.Duration
	// Prepare, when set, runs after the CLI's configuration is written
	// into the isolated home and before the CLI starts, with that home and
	// the CLI's environment: a test writes its own hook configuration
	// there (opx agents install --user does, for Codex trusted with this
	// environment).
	Prepare func(home string, env []string) error
	// Kill, when closed, kills the CLI's process group (a crash in the
	// middle of a tool call); Run then returns what it left, with Err
	// saying it was killed.
	Kill <-chan struct{}
}

// A Result is what one run of a CLI left.
type Result struct {
	// Dir is the working directory; Home the isolated home (HOME,
	// CODEX_HOME's parent, XDG dirs, TMPDIR under it).
	Dir, Home      string
	Stdout, Stderr []byte
	// Err is the exit error (nil for exit status 0).
	Err error
}

// JSON decodes the CLI's JSON output: its single JSON document (Claude's
// and Gemini's --output-format json), or the last line that is one
// (Codex's --json event stream; Events has them all).
func (r *Result) JSON() (map[string]any, error) {
	var m map[string]any
	if err := json.Unmarshal(bytes.TrimSpace(r.Stdout), &m); err == nil {
		return m, nil
	}
	ev := r.Events()
	if len(ev) == 0 {
		return nil, errors.New("no JSON on stdout")
	}
	return ev[len(ev)-1], nil
}

// Events decodes stdout as JSON lines, skipping lines that are not JSON
// objects.
func (r *Result) Events() []map[string]any {
	var out []map[string]any
	for _, line := range bytes.Split(r.Stdout, []byte("\n")) {
		var m map[string]any
		if json.Unmarshal(line, &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

// Run runs cli headless once against srv (its vendor's fake: NewAnthropic
// for Claude, NewOpenAI for Codex, NewGemini for Gemini) with an isolated
// home, and returns what it left. The CLI and everything it started run
// in their own process group, killed when the run ends or times out and
// again at test cleanup.
func Run(t testing.TB, cli CLI, srv *Server, o Options) *Result {
	t.Helper()
	argv, extraPath := Program(t, cli)
	if o.Prompt == "" {
		o.Prompt = "do the task"
	}
	if o.Dir == "" {
		o.Dir = t.TempDir()
	}
	if o.Timeout == 0 {
		o.Timeout = 90 * time.Second
	}
	home := t.TempDir()
	env := baseEnv(home, extraPath)
	var args []string
	var err error
	switch cli {
	case Claude:
		env, args, err = claudeSetup(home, srv, o, env)
	case Codex:
		env, args, err = codexSetup(t, argv, home, srv, o, env)
	case Gemini:
		env, args, err = geminiSetup(home, srv, o, env)
	}
	if err == nil && o.Prepare != nil {
		err = o.Prepare(home, append(env, o.Env...))
	}
	if err != nil {
		t.Fatalf("%s setup: %v", cli, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], append(append(argv[1:], args...), o.Args...)...)
	cmd.Dir = o.Dir
	cmd.Env = append(env, o.Env...)
	cmd.Stdin = nil // /dev/null: Codex reads a prompt from a non-terminal stdin
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	startGroup(t, cmd)
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", cli, err)
	}
	waited := make(chan struct{})
	if o.Kill != nil {
		go func() {
			select {
			case <-o.Kill:
				killGroup(cmd)
			case <-waited:
			}
		}()
	}
	werr := cmd.Wait()
	close(waited)
	killGroup(cmd)
	if ctx.Err() != nil {
		t.Fatalf("%s did not finish within %v\nstdout: %.2000s\nstderr: %.2000s\nrequests:\n%s", cli, o.Timeout, stdout.Bytes(), stderr.Bytes(), srv.Describe())
	}
	return &Result{Dir: o.Dir, Home: home, Stdout: stdout.Bytes(), Stderr: stderr.Bytes(), Err: werr}
}

// startGroup makes cmd the leader of a new process group that
// cancellation, the end of the run and test cleanup kill whole (a CLI's
// hooks and shell commands are its children).
func startGroup(t testing.TB, cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { killGroup(cmd); return nil }
	cmd.WaitDelay = 5 * time.Second // output pipes held by orphans
	t.Cleanup(func() { killGroup(cmd) })
}

func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// baseEnv is the environment every CLI gets: nothing of the caller's but
// PATH's system directories, an isolated HOME, XDG directories and
// TMPDIR under it, no proxy, no colour.
func baseEnv(home string, extraPath []string) []string {
	tmp := filepath.Join(home, "tmp")
	for _, d := range []string{tmp, filepath.Join(home, ".config"), filepath.Join(home, ".cache"),
		filepath.Join(home, ".local", "share"), filepath.Join(home, ".local", "state")} {
		_ = os.MkdirAll(d, 0o700)
	}
	path := append(extraPath, "/usr/local/bin", "/usr/bin", "/bin")
	return []string{
		"PATH=" + strings.Join(path, string(os.PathListSeparator)),
		"HOME=" + home,
		"TMPDIR=" + tmp,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		"LANG=C.UTF-8",
		"TERM=dumb",
		"NO_COLOR=1",
		"NO_PROXY=127.0.0.1,localhost",
		"no_proxy=127.0.0.1,localhost",
	}
}

// hooksJSON renders hooks in the shape the three CLIs share:
// {EVENT:[{"matcher":M,"hooks":[{"type":"command","command":C,"timeout":T}]}]}.
// Gemini's hooks also carry a name, and its timeout is in milliseconds
// where Claude's and Codex's are in seconds (Gemini read 60 as 60 ms).
// Codex clamps a SessionEnd hook's timeout to 3 s and says so: none is
// given there.
func hooksJSON(hooks []Hook, gemini bool) map[string]any {
	byEvent := map[string][]any{}
	for i, h := range hooks {
		cmd := map[string]any{"type": "command", "command": h.Command}
		switch {
		case gemini:
			cmd["name"] = "opx-test-" + strings.ToLower(h.Event) + "-" + string(rune('a'+i%26))
			cmd["timeout"] = 60_000
		case h.Event != "SessionEnd":
			cmd["timeout"] = 60
		}
		group := map[string]any{"hooks": []any{cmd}}
		if h.Matcher != "" {
			group["matcher"] = h.Matcher
		}
		byEvent[h.Event] = append(byEvent[h.Event], group)
	}
	out := map[string]any{}
	for k, v := range byEvent {
		out[k] = v
	}
	return out
}

func writeJSON(path string, v any) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o600)
}
