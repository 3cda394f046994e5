package cli_test

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/opx-dev/opx/agents/hookproto"
	"github.com/opx-dev/opx/agents/unrecorded"
	"github.com/opx-dev/opx/cli"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// Tests of `opx hook AGENT` that need no engine, or one that cannot be
// reached: hostile input, engine down, a panic, the bounds. The tests
// against a scripted HookService are in hook_fake_engine_test.go, those
// against the real engine in cmd_hook_engine_test.go.

var hookAgents = []hookproto.Agent{hookproto.Claude, hookproto.Codex, hookproto.Gemini}

// hookNames are each CLI's names of the events the tests send.
var hookNames = map[hookproto.Agent]map[hookproto.Kind]string{
	hookproto.Claude: {hookproto.KindPreTool: "PreToolUse", hookproto.KindPostTool: "PostToolUse", hookproto.KindSessionStart: "SessionStart", hookproto.KindSessionEnd: "SessionEnd"},
	hookproto.Codex:  {hookproto.KindPreTool: "PreToolUse", hookproto.KindPostTool: "PostToolUse", hookproto.KindSessionStart: "SessionStart", hookproto.KindSessionEnd: "SessionEnd"},
	hookproto.Gemini: {hookproto.KindPreTool: "BeforeTool", hookproto.KindPostTool: "AfterTool", hookproto.KindSessionStart: "SessionStart", hookproto.KindSessionEnd: "SessionEnd"},
}

// hookEvent is an event of kind as agent's CLI writes it, in directory
// cwd, with the members of over added or replaced (nil removes one).
func hookEvent(agent hookproto.Agent, kind hookproto.Kind, cwd string, over map[string]any) []byte {
	m := map[string]any{"session_id": "sess-1", "transcript_path": "/nonexistent/t.jsonl", "cwd": cwd,
		"hook_event_name": hookNames[agent][kind]}
	if kind == hookproto.KindPreTool || kind == hookproto.KindPostTool {
		m["tool_name"] = "Bash"
		if agent == hookproto.Gemini {
			m["tool_name"] = "run_shell_command"
		} else {
			m["tool_use_id"] = "toolu_1"
		}
		m["tool_input"] = map[string]any{"command": "rm -rf build && echo '<done>'"}
	}
	if kind == hookproto.KindPostTool {
		m["tool_response"] = map[string]any{"stdout": "<done>\n", "stderr": ""}
	}
	for k, v := range over {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return b
}

// runHook runs opx ARGS in-process with stdin.
func runHook(t *testing.T, stdin io.Reader, args ...string) result {
	t.Helper()
	app := cli.NewApp()
	var out, errOut bytes.Buffer
	app.Reader, app.Writer, app.ErrWriter = stdin, &out, &errOut
	release := lockSetup(app)
	err := app.Run(append([]string{"opx"}, args...))
	release()
	return result{stdout: out.String(), stderr: errOut.String(), code: cli.ExitCode(err), err: err}
}

// wantDeny fails the test unless r denies a tool call in agent's format
// with a reason that says each of want.
func wantDeny(t *testing.T, agent hookproto.Agent, r result, want ...string) {
	t.Helper()
	reason := r.stderr
	if agent == hookproto.Gemini {
		r.wantCode(t, 0)
		var d struct{ Decision, Reason string }
		if err := json.Unmarshal([]byte(r.stdout), &d); err != nil || d.Decision != "deny" {
			t.Fatalf("gemini: stdout is not a denial: %q (%v)\nstderr:\n%s", r.stdout, err, r.stderr)
		}
		reason = d.Reason
	} else {
		r.wantCode(t, 2)
		if r.stdout != "" {
			t.Errorf("%s: a denial by exit 2 with stdout %q", agent, r.stdout)
		}
	}
	for _, w := range want {
		if !strings.Contains(reason, w) {
			t.Errorf("%s: the denial's reason lacks %q: %q", agent, w, reason)
		}
	}
}

// wantAnswered fails the test unless r lets the event go on: exit 0,
// nothing on stdout, stderr saying each of want.
func wantAnswered(t *testing.T, r result, want ...string) {
	t.Helper()
	r.wantCode(t, 0)
	if r.stdout != "" {
		t.Errorf("stdout %q, want none", r.stdout)
	}
	r.wantErr(t, want...)
}

// hookWorkspace makes a workspace (.opx/, with config if not empty) in
// a fresh state home, whose engine cannot start: attachEngine's program
// is /bin/false.
func hookWorkspace(t *testing.T, config string) string {
	t.Helper()
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	t.Setenv("OPX_LEDGER", "")
	for _, v := range []string{"CLAUDE_PROJECT_DIR", "GEMINI_PROJECT_DIR"} {
		t.Setenv(v, "")
	}
	t.Cleanup(cli.SetEngineProgramForTest("/bin/false"))
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(ws, ".opx"), 0o755); err != nil {
		t.Fatal(err)
	}
	if config != "" {
		if err := os.WriteFile(filepath.Join(ws, ".opx", "config.yaml"), []byte(config), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return ws
}

// stateDir is the state directory of workspace ws.
func stateDir(t *testing.T, ws string) string {
	t.Helper()
	id, err := ledger.WorkspaceID(ws)
	if err != nil {
		t.Fatal(err)
	}
	p, err := ledger.DefaultPath(id)
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(p)
}

func TestHook_Usage(t *testing.T) {
	hookWorkspace(t, "")
	for _, args := range [][]string{{"hook"}, {"hook", "cursor"}, {"hook", "claude", "codex"}, {"hook", "--nope", "claude"}} {
		r := runHook(t, strings.NewReader("{}"), args...)
		// Exit 2: each CLI takes it as a denial.
		r.wantCode(t, cli.ExitUsage)
		if r.stdout != "" {
			t.Errorf("%v: stdout %q", args, r.stdout)
		}
	}
}

// TestHook_HostileInput: input opx cannot take is refused: a tool call
// denied in each CLI's format with the reason, any other event left to
// go on with the reason on stderr (there is nothing to deny).
func TestHook_HostileInput(t *testing.T) {
	ws := hookWorkspace(t, "")
	outside := t.TempDir() // no .opx above it
	for _, agent := range hookAgents {
		pre := func(over map[string]any) []byte { return hookEvent(agent, hookproto.KindPreTool, ws, over) }
		for _, tc := range []struct {
			name  string
			stdin []byte
			deny  bool
			want  string
		}{
			{"empty", nil, true, "malformed"},
			{"malformed JSON", []byte(`{"hook_event_name": "` + hookNames[agent][hookproto.KindPreTool] + `", "session_id": `), true, "malformed"},
			{"not an object", []byte(`["PreToolUse"]`), true, "malformed"},
			{"duplicate member", []byte(`{"hook_event_name":"` + hookNames[agent][hookproto.KindPreTool] + `","session_id":"a","session_id":"b"}`), true, "malformed"},
			{"session id with control characters", pre(map[string]any{"session_id": "s\x1b[2J\n"}), true, "bad id"},
			{"no session id", pre(map[string]any{"session_id": nil}), true, "bad id"},
			{"relative cwd", pre(map[string]any{"cwd": "work/../x"}), true, "bad path"},
			{"cwd outside any workspace", pre(map[string]any{"cwd": outside}), true, "is in no opx workspace"},
			{"cwd that does not exist", pre(map[string]any{"cwd": "/nonexistent/opx-hook-test"}), true, "the agent's directory"},
			{"tool name with a control character", pre(map[string]any{"tool_name": "Ba\x07sh"}), true, "bad field"},
			{"malformed, a session event", []byte(`{"hook_event_name":"SessionStart","session_id":`), false, "SessionStart event not recorded: malformed"},
			{"session id with control characters, a session event",
				hookEvent(agent, hookproto.KindSessionStart, ws, map[string]any{"session_id": "s\x00"}), false, "bad id"},
			{"unknown event name outside any workspace",
				hookEvent(agent, hookproto.KindSessionStart, outside, map[string]any{"hook_event_name": "SomethingNew"}), false, "SomethingNew event not recorded"},
		} {
			t.Run(string(agent)+"/"+tc.name, func(t *testing.T) {
				r := runHook(t, bytes.NewReader(tc.stdin), "hook", string(agent))
				if tc.deny {
					wantDeny(t, agent, r, "opx could not judge this call", tc.want)
				} else {
					wantAnswered(t, r, tc.want)
				}
			})
		}
	}
}

// floodReader is a hook event of size bytes, made as it is read: a
// tool call whose input (or a response) is one long string.
type floodReader struct {
	head []byte
	size int
	read int
}

func newFlood(name string, size int) *floodReader {
	return &floodReader{head: []byte(`{"session_id":"s1","cwd":"/tmp","hook_event_name":"` + name + `","tool_name":"Write","tool_use_id":"t1","tool_input":{"content":"`), size: size}
}

func (f *floodReader) Read(p []byte) (int, error) {
	if f.read >= f.size {
		return 0, io.EOF
	}
	n := min(len(p), f.size-f.read)
	for i := range n {
		switch at := f.read + i; {
		case at < len(f.head):
			p[i] = f.head[at]
		case at >= f.size-3:
			p[i] = `"}}`[at-(f.size-3)]
		default:
			p[i] = 'a'
		}
	}
	f.read += n
	return n, nil
}

// TestHook_FiftyMegabytes: a 50 MB event is refused after
// hookproto.MaxEventBytes+1 bytes, in bounded memory: a tool call
// denied, a post-tool event left to go on.
func TestHook_FiftyMegabytes(t *testing.T) {
	hookWorkspace(t, "")
	for _, tc := range []struct {
		agent hookproto.Agent
		kind  hookproto.Kind
	}{{hookproto.Claude, hookproto.KindPreTool}, {hookproto.Gemini, hookproto.KindPreTool}, {hookproto.Codex, hookproto.KindPostTool}} {
		flood := newFlood(hookNames[tc.agent][tc.kind], 50<<20)
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		r := runHook(t, flood, "hook", string(tc.agent))
		runtime.ReadMemStats(&after)
		if tc.kind == hookproto.KindPreTool {
			wantDeny(t, tc.agent, r, "too large")
		} else {
			wantAnswered(t, r, "PostToolUse event not recorded", "too large")
		}
		if flood.read > hookproto.MaxEventBytes+1 {
			t.Errorf("%s: read %d bytes of stdin, want at most %d", tc.agent, flood.read, hookproto.MaxEventBytes+1)
		}
		// Reading all 50 MB would allocate more than 50 MB; the event's
		// bound in chunks, plus the app, is about 17.
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 32<<20 {
			t.Errorf("%s: %d MiB allocated for a refused event, want at most 32", tc.agent, alloc>>20)
		}
	}
}

// TestHook_TooLargeToJudge: a tool call larger than a message to the
// engine is denied before any engine is asked.
func TestHook_TooLargeToJudge(t *testing.T) {
	ws := hookWorkspace(t, "")
	big := strings.Repeat("x", 4<<20) // the bound is 4 MiB - 64 KiB
	for _, agent := range hookAgents {
		ev := hookEvent(agent, hookproto.KindPreTool, ws, map[string]any{"tool_input": map[string]any{"command": big}})
		r := runHook(t, bytes.NewReader(ev), "hook", string(agent))
		wantDeny(t, agent, r, "opx judges tool calls of at most")
		if strings.Contains(r.stderr, "starting one") {
			t.Errorf("%s: an engine was started for a call refused anyway:\n%s", agent, r.stderr)
		}
	}
}

// panicReader panics when read: a bug anywhere in the hook.
type panicReader struct{}

func (panicReader) Read([]byte) (int, error) { panic("boom") }

// TestHook_Panic: a panic denies the call in the CLI's format.
func TestHook_Panic(t *testing.T) {
	hookWorkspace(t, "")
	for _, agent := range hookAgents {
		r := runHook(t, panicReader{}, "hook", string(agent))
		wantDeny(t, agent, r, "internal error: boom")
	}
}

// TestHook_EngineDown_Deny: with no engine to be had (its start fails)
// and hooks.on_engine_down at its default, a tool call is denied in each
// CLI's format and nothing is written down; a session event goes on.
func TestHook_EngineDown_Deny(t *testing.T) {
	ws := hookWorkspace(t, "")
	for _, agent := range hookAgents {
		t.Run(string(agent), func(t *testing.T) {
			r := runHook(t, bytes.NewReader(hookEvent(agent, hookproto.KindPreTool, ws, nil)), "hook", string(agent))
			wantDeny(t, agent, r, "no engine:", "opx start exited early")
			r = runHook(t, bytes.NewReader(hookEvent(agent, hookproto.KindSessionStart, ws, nil)), "hook", string(agent))
			wantAnswered(t, r, "SessionStart event not recorded: no engine")
		})
	}
	if _, err := os.Stat(filepath.Join(stateDir(t, ws), unrecorded.File)); !os.IsNotExist(err) {
		t.Errorf("calls were written down with on_engine_down: deny (%v)", err)
	}
}

// TestHook_EngineDown_Allow: with hooks.on_engine_down: allow, a tool
// call is allowed and written down as exactly a hook.unrecorded payload;
// once the file is full, calls are still allowed, with a warning.
func TestHook_EngineDown_Allow(t *testing.T) {
	ws := hookWorkspace(t, "hooks:\n  on_engine_down: allow\n")
	path := filepath.Join(stateDir(t, ws), unrecorded.File)
	for i, agent := range hookAgents {
		r := runHook(t, bytes.NewReader(hookEvent(agent, hookproto.KindPreTool, ws, nil)), "hook", string(agent))
		wantAnswered(t, r, "runs unjudged; written down in "+path)
		lines := readLines(t, path)
		if len(lines) != i+1 {
			t.Fatalf("%d lines written down after %d calls", len(lines), i+1)
		}
		var got event.HookUnrecorded
		dec := json.NewDecoder(strings.NewReader(lines[i]))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&got); err != nil {
			t.Fatalf("the line is not a hook.unrecorded payload: %v\n%s", err, lines[i])
		}
		if err := got.Validate(); err != nil {
			t.Errorf("the line does not validate as hook.unrecorded: %v", err)
		}
		want := event.HookUnrecorded{Agent: string(agent), AgentSessionID: "sess-1", Name: hookNames[agent][hookproto.KindPreTool],
			AgentTool: map[bool]string{true: "run_shell_command", false: "Bash"}[agent == hookproto.Gemini],
			Input:     `{"command":"rm -rf build \u0026\u0026 echo '\u003cdone\u003e'"}`, Cwd: ws, At: got.At, Decision: "allow"}
		if !strings.HasPrefix(got.Reason, "no engine: ") || !strings.HasSuffix(got.Reason, "; hooks.on_engine_down: allow") {
			t.Errorf("reason %q", got.Reason)
		}
		want.Reason = got.Reason
		if got != want {
			t.Errorf("written down\n%+v\nwant\n%+v", got, want)
		}
		// A session event is not a call let through: not written down.
		r = runHook(t, bytes.NewReader(hookEvent(agent, hookproto.KindSessionStart, ws, nil)), "hook", string(agent))
		wantAnswered(t, r, "not recorded")
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the file: %v, %v; want mode 0600", fi, err)
	}
	// Full: the call still runs as configured, with a warning.
	if err := os.WriteFile(path, bytes.Repeat([]byte("\n"), unrecorded.MaxFileBytes), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runHook(t, bytes.NewReader(hookEvent(hookproto.Claude, hookproto.KindPreTool, ws, nil)), "hook", "claude")
	wantAnswered(t, r, "WARNING", "NOT written down", "full")
}

// readLines is the file's lines (not its empty ones).
func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

// TestUnrecordedLine_IsHookUnrecorded: the file's line and the ledger's
// payload have the same JSON fields (agents/unrecorded cannot import the
// record's package to share the type).
func TestUnrecordedLine_IsHookUnrecorded(t *testing.T) {
	l := unrecorded.Line{Agent: "a", AgentSessionID: "b", Name: "c", AgentTool: "d", Input: "e", Cwd: "f", At: "g", Decision: "h", Reason: "i"}
	b, _ := json.Marshal(l)
	var p event.HookUnrecorded
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		t.Fatal(err)
	}
	back, _ := json.Marshal(p)
	if !bytes.Equal(b, back) {
		t.Errorf("the line\n%s\nas hook.unrecorded\n%s", b, back)
	}
	var l2 unrecorded.Line
	dec = json.NewDecoder(bytes.NewReader(back))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l2); err != nil || l2 != l {
		t.Errorf("hook.unrecorded as a line: %+v, %v", l2, err)
	}
}
