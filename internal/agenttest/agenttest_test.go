package agenttest_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/opx-dev/opx/internal/agenttest"
)

// spec is what the tests know of one CLI: its fake, its hook events and
// the tool calls of a tour through its tools with the tool_name each
// shows in hook stdin (the table in doc.go; the tests keep it true).
type spec struct {
	cli     agenttest.CLI
	server  func(testing.TB, ...agenttest.Turn) *agenttest.Server
	pre     string
	post    string
	session []string
	// tour returns the turns for workspace dir, the first a shell call
	// that writes shell.txt, and the tool_name each shows in the hooks.
	tour func(dir string) ([]agenttest.Turn, []string)
	// preFields and postFields must be in the pre- and post-tool stdin.
	preFields, postFields []string
	// deny is the denying pre-tool hook's action, reason "opx-says-no".
	deny string
}

const reason = "opx-says-no"

var specs = []spec{{
	cli:     agenttest.Claude,
	server:  agenttest.NewAnthropic,
	pre:     "PreToolUse",
	post:    "PostToolUse",
	session: []string{"SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"},
	tour: func(dir string) ([]agenttest.Turn, []string) {
		f := filepath.Join(dir, "shell.txt")
		return []agenttest.Turn{
			agenttest.Shell("echo tour > shell.txt"),
			agenttest.Call("Read", map[string]any{"file_path": f}),
			agenttest.Call("Edit", map[string]any{"file_path": f, "old_string": "tour", "new_string": "toured"}),
			agenttest.Call("Write", map[string]any{"file_path": filepath.Join(dir, "new.txt"), "content": "new\n"}),
			agenttest.Call("Grep", map[string]any{"pattern": "tour"}),
			agenttest.Call("Glob", map[string]any{"pattern": "*.txt"}),
		}, []string{"Bash", "Read", "Edit", "Write", "Grep", "Glob"}
	},
	preFields:  []string{"session_id", "transcript_path", "cwd", "prompt_id", "permission_mode", "hook_event_name", "tool_name", "tool_input", "tool_use_id"},
	postFields: []string{"tool_response", "duration_ms"},
	deny:       `echo "` + reason + `" >&2; exit 2`,
}, {
	cli:     agenttest.Codex,
	server:  agenttest.NewOpenAI,
	pre:     "PreToolUse",
	post:    "PostToolUse",
	session: []string{"SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"},
	tour: func(dir string) ([]agenttest.Turn, []string) {
		return []agenttest.Turn{
			agenttest.Shell("echo tour > shell.txt"),
			agenttest.Call("apply_patch", map[string]any{"input": "*** Begin Patch\n*** Add File: new.txt\n+new\n*** Update File: shell.txt\n@@\n-tour\n+toured\n*** End Patch\n"}),
		}, []string{"Bash", "apply_patch"}
	},
	preFields:  []string{"session_id", "turn_id", "transcript_path", "cwd", "hook_event_name", "model", "permission_mode", "tool_name", "tool_input", "tool_use_id"},
	postFields: []string{"tool_response"},
	deny:       `printf '%s' '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"` + reason + `"}}'`,
}, {
	cli:     agenttest.Gemini,
	server:  agenttest.NewGemini,
	pre:     "BeforeTool",
	post:    "AfterTool",
	session: []string{"SessionStart", "BeforeAgent", "AfterAgent", "SessionEnd"},
	tour: func(dir string) ([]agenttest.Turn, []string) {
		return []agenttest.Turn{
			agenttest.Shell("echo tour > shell.txt"),
			agenttest.Call("read_file", map[string]any{"file_path": "shell.txt"}),
			agenttest.Call("replace", map[string]any{"file_path": "shell.txt", "instruction": "rename", "old_string": "tour", "new_string": "toured"}),
			agenttest.Call("write_file", map[string]any{"file_path": "new.txt", "content": "new\n"}),
			agenttest.Call("grep_search", map[string]any{"pattern": "tour"}),
			agenttest.Call("glob", map[string]any{"pattern": "*.txt"}),
			agenttest.Call("list_directory", map[string]any{"dir_path": "."}),
		}, []string{"run_shell_command", "read_file", "replace", "write_file", "grep_search", "glob", "list_directory"}
	},
	preFields:  []string{"session_id", "transcript_path", "cwd", "hook_event_name", "timestamp", "tool_name", "tool_input"},
	postFields: []string{"tool_response"},
	deny:       `printf '%s' '{"decision":"deny","reason":"` + reason + `"}'`,
}}

// TestHooks_Tour: each CLI, driven by its fake through a shell call and
// its file tools, runs the recording hooks before and after each call and
// at each session-level event, with the fields and tool names doc.go
// lists, and the calls take effect.
func TestHooks_Tour(t *testing.T) {
	for _, s := range specs {
		t.Run(string(s.cli), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			turns, tools := s.tour(dir)
			srv := s.server(t, turns...)
			log := agenttest.NewHookLog(t)
			cmd := log.Command(t, "exit 0")
			hooks := []agenttest.Hook{{Event: s.pre, Matcher: "*", Command: cmd}, {Event: s.post, Matcher: "*", Command: cmd}}
			for _, e := range s.session {
				hooks = append(hooks, agenttest.Hook{Event: e, Command: cmd})
			}
			res := agenttest.Run(t, s.cli, srv, agenttest.Options{Dir: dir, Hooks: hooks})
			if res.Err != nil || srv.Used() != len(turns) {
				t.Fatalf("%s: %v, %d of %d turns used\nstdout: %.2000s\nstderr: %.2000s\n%s", s.cli, res.Err, srv.Used(), len(turns), res.Stdout, res.Stderr, srv.Describe())
			}
			if _, err := res.JSON(); err != nil {
				t.Errorf("output: %v: %.500s", err, res.Stdout)
			}
			events := log.Events(t)
			var names, pre, post []string
			var sessionID string
			for _, e := range events {
				names = append(names, e.Name())
				id, _ := e.Input["session_id"].(string)
				if sessionID == "" {
					sessionID = id
				}
				if id == "" || id != sessionID {
					t.Errorf("%s: session_id %q, first was %q", e.Name(), id, sessionID)
				}
				switch e.Name() {
				case s.pre:
					pre = append(pre, e.Tool())
					need(t, e, s.preFields)
				case s.post:
					post = append(post, e.Tool())
					need(t, e, append(s.preFields, s.postFields...))
				}
			}
			if !slices.Equal(pre, tools) || !slices.Equal(post, tools) {
				t.Errorf("tool_name before calls %q, after %q; want %q", pre, post, tools)
			}
			for _, e := range s.session {
				if !slices.Contains(names, e) {
					t.Errorf("no %s event; events: %q", e, names)
				}
			}
			if names[0] != "SessionStart" || names[len(names)-1] != "SessionEnd" {
				t.Errorf("events %q: not from SessionStart to SessionEnd", names)
			}
			shell := events[slices.Index(names, s.pre)]
			if in, _ := shell.Input["tool_input"].(map[string]any); in["command"] != "echo tour > shell.txt" {
				t.Errorf("shell call's tool_input %v", shell.Input["tool_input"])
			}
			if cwd, _ := shell.Input["cwd"].(string); !samePath(cwd, dir) {
				t.Errorf("cwd %q, want %q", cwd, dir)
			}
			if b, err := os.ReadFile(filepath.Join(dir, "shell.txt")); err != nil || string(b) != "toured\n" {
				t.Errorf("shell.txt after the shell call and the edit: %q %v", b, err)
			}
			if b, err := os.ReadFile(filepath.Join(dir, "new.txt")); err != nil || string(b) != "new\n" {
				t.Errorf("new.txt after the write: %q %v", b, err)
			}
		})
	}
}

// TestHooks_Deny: a pre-tool hook that denies (Claude: exit 2 and the
// reason on stderr; Codex and Gemini: their JSON deny on stdout) stops a
// shell call: the file it would create does not exist, no post-tool hook
// runs for it, and the model receives the hook's reason in the tool
// result of the next request.
func TestHooks_Deny(t *testing.T) {
	for _, s := range specs {
		t.Run(string(s.cli), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			srv := s.server(t, agenttest.Shell("echo pwned > pwned.txt"))
			log := agenttest.NewHookLog(t)
			hooks := []agenttest.Hook{
				{Event: s.pre, Matcher: "*", Command: log.Command(t, s.deny)},
				{Event: s.post, Matcher: "*", Command: log.Command(t, "exit 0")},
			}
			res := agenttest.Run(t, s.cli, srv, agenttest.Options{Dir: dir, Hooks: hooks})
			if res.Err != nil {
				t.Fatalf("%s: %v\nstdout: %.2000s\nstderr: %.2000s", s.cli, res.Err, res.Stdout, res.Stderr)
			}
			if ents, err := os.ReadDir(dir); err != nil || len(ents) != 0 {
				t.Errorf("the workspace after a denied call holds %v %v (the denied command ran, or the harness wrote there)", ents, err)
			}
			var names []string
			for _, e := range log.Events(t) {
				names = append(names, e.Name())
			}
			if !slices.Equal(names, []string{s.pre}) {
				t.Errorf("hook events %q, want only %s", names, s.pre)
			}
			results := srv.ToolResults()
			if len(results) != 1 || !strings.Contains(results[0].Output, reason) {
				t.Errorf("tool results sent to the model %+v, want one with %q\n%s", results, reason, srv.Describe())
			}
			if s.cli == agenttest.Claude {
				if m, _ := res.JSON(); !strings.Contains(mustString(m["permission_denials"]), "pwned") {
					t.Errorf("permission_denials %v", m["permission_denials"])
				}
			}
		})
	}
}

func need(t *testing.T, e agenttest.HookEvent, fields []string) {
	t.Helper()
	for _, f := range fields {
		if _, ok := e.Input[f]; !ok {
			t.Errorf("%s %s: no %s in %v", e.Name(), e.Tool(), f, keys(e.Input))
		}
	}
}

func keys(m map[string]any) []string {
	var k []string
	for x := range m {
		k = append(k, x)
	}
	slices.Sort(k)
	return k
}

func samePath(a, b string) bool {
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}

func mustString(v any) string {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(strings.ReplaceAll(strings.ReplaceAll(anyString(v), "\n", " "), "\t", " ")))
	return b.String()
}

func anyString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case []any:
		var parts []string
		for _, e := range x {
			parts = append(parts, anyString(e))
		}
		return strings.Join(parts, " ")
	case map[string]any:
		var parts []string
		for _, k := range keys(x) {
			parts = append(parts, k+"="+anyString(x[k]))
		}
		return strings.Join(parts, " ")
	default:
		return ""
	}
}
