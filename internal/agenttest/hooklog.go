package agenttest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// A HookLog is a directory where hook scripts record what each CLI sends
// them: every invocation writes its stdin to NNN.json and its environment
// to NNN.env, named by the nanosecond clock so that they sort in order.
type HookLog struct {
	Dir string
}

// NewHookLog makes an empty log in a new temporary directory.
func NewHookLog(t testing.TB) *HookLog {
	t.Helper()
	d := filepath.Join(t.TempDir(), "hooklog")
	if err := os.Mkdir(d, 0o700); err != nil {
		t.Fatal(err)
	}
	return &HookLog{Dir: d}
}

// Command writes a hook script that records its stdin and environment in
// the log and then runs then (shell: for instance `exit 0`, or a denial
// such as `echo "no" >&2; exit 2`), and returns its path, the hook
// configuration's command.
func (l *HookLog) Command(t testing.TB, then string) string {
	t.Helper()
	f, err := os.CreateTemp(filepath.Dir(l.Dir), "hook-*.sh")
	if err != nil {
		t.Fatal(err)
	}
	script := fmt.Sprintf("#!/bin/sh\nf=%q/$(date +%%s%%N)-$$\ncat > \"$f.json.part\" && mv \"$f.json.part\" \"$f.json\"\nenv > \"$f.env\"\n%s\n", l.Dir, then)
	if _, err := f.WriteString(script); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(f.Name(), 0o755); err != nil {
		t.Fatal(err)
	}
	return f.Name()
}

// A HookEvent is one recorded hook invocation.
type HookEvent struct {
	// Input is the hook's stdin, decoded.
	Input map[string]any
	// Env is the hook's environment.
	Env map[string]string
}

// Name returns the input's hook_event_name.
func (e HookEvent) Name() string { s, _ := e.Input["hook_event_name"].(string); return s }

// Tool returns the input's tool_name.
func (e HookEvent) Tool() string { s, _ := e.Input["tool_name"].(string); return s }

// Events returns the recorded invocations in order. A stdin that is not a
// JSON object fails the test.
func (l *HookLog) Events(t testing.TB) []HookEvent {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(l.Dir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(m)
	var out []HookEvent
	for _, p := range m {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		ev := HookEvent{Env: map[string]string{}}
		if err := json.Unmarshal(b, &ev.Input); err != nil {
			t.Fatalf("hook stdin %s: %v: %.500s", p, err, b)
		}
		envb, _ := os.ReadFile(strings.TrimSuffix(p, ".json") + ".env")
		for _, line := range strings.Split(string(envb), "\n") {
			if k, v, ok := strings.Cut(line, "="); ok {
				ev.Env[k] = v
			}
		}
		out = append(out, ev)
	}
	return out
}
