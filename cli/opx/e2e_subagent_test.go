package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/ledgertest"
)

// subagentTranscript scripts the parent (a user message naming what to
// spawn) and each sub-agent (its task is its user message). A spawn
// result starts with the sub-agent's id: its first 16 bytes.
const subagentTranscript = `{"model": "opx-scripted-1", "turns": [
 {"match": "^run the team$", "steps": [
  {"tool_calls": [
    {"name": "spawn_agent", "arguments": "{\"task\": \"sub-read: summarise README.md\"}"},
    {"name": "spawn_agent", "arguments": "{\"task\": \"sub-list: list the workspace\", \"tools\": [\"list_directory\", \"read_file\"]}"}]},
  {"tool_calls": [
    {"name": "agent_result", "arguments": "{\"id\": {{json (slice (index .Results 0).Content 0 16)}}}"},
    {"name": "agent_result", "arguments": "{\"id\": {{json (slice (index .Results 1).Content 0 16)}}}"}]},
  {"text": "team: [{{(index .Results 2).Content}}] [{{(index .Results 3).Content}}]"}]},
 {"match": "^run the waiters$", "steps": [
  {"tool_calls": [
    {"name": "spawn_agent", "arguments": "{\"task\": \"sub-wait: read the guarded file\"}"},
    {"name": "spawn_agent", "arguments": "{\"task\": \"sub-wait: read the guarded file again\"}"}]},
  {"tool_calls": [
    {"name": "cancel_agent", "arguments": "{\"id\": {{json (slice (index .Results 1).Content 0 16)}}}"},
    {"name": "agent_result", "arguments": "{\"id\": {{json (slice (index .Results 0).Content 0 16)}}}"},
    {"name": "agent_result", "arguments": "{\"id\": {{json (slice (index .Results 1).Content 0 16)}}}"}]},
  {"text": "waiters: [{{(index .Results 3).Content}}] [{{(index .Results 4).Content}}]"}]},
 {"match": "^spawn a spawner$", "steps": [
  {"tool_calls": [{"name": "spawn_agent", "arguments": "{\"task\": \"sub-spawn: start another\"}"}]},
  {"tool_calls": [{"name": "agent_result", "arguments": "{\"id\": {{json (slice (index .Results 0).Content 0 16)}}}"}]},
  {"text": "spawner: [{{(index .Results 1).Content}}]"}]},
 {"match": "^sub-read:", "steps": [
  {"tool_calls": [{"name": "read_file", "arguments": "{\"path\": \"README.md\"}"}]},
  {"text": "README says {{head 1 .LastResult}}"}]},
 {"match": "^sub-list:", "steps": [
  {"tool_calls": [{"name": "list_directory", "arguments": "{\"path\": \".\"}"}]},
  {"text": "listed {{lines .LastResult}} entries"}]},
 {"match": "^sub-wait:", "steps": [
  {"tool_calls": [{"name": "read_file", "arguments": "{\"path\": \"t3/guarded.md\"}"}]},
  {"text": "got {{.LastResult}}"}]},
 {"match": "^sub-spawn:", "steps": [
  {"tool_calls": [{"name": "spawn_agent", "arguments": "{\"task\": \"sub-read: recursion\"}"}]},
  {"text": "my spawn: {{.LastResult}}"}]}
]}`

// subagentPolicy asks a human about reads under t3/, so a sub-agent can be
// held mid-task (waiting for an approval) without any timing.
const subagentPolicy = "version: 1\ndefault: allow\nverify:\n  - {name: human-reads, tools: [read_file], paths: [\"t3/**\"], tier: 3}\n"

// subWorld is a world set up for sub-agents with agents config extra.
func subWorld(t *testing.T, agents string) *world {
	t.Helper()
	needSandbox(t)
	w := newWorld(t)
	os.MkdirAll(filepath.Join(w.ws, ".opx"), 0o755)
	os.MkdirAll(filepath.Join(w.ws, "t3"), 0o755)
	for name, content := range map[string]string{
		".opx/config.yaml":     "provider:\n  kind: scripted\n  transcript: .opx/transcript.json\npolicy: .opx/policy.yaml\nagents:\n" + agents,
		".opx/transcript.json": subagentTranscript,
		".opx/policy.yaml":     subagentPolicy,
		"t3/guarded.md":        "the guarded file\n",
	} {
		if err := os.WriteFile(filepath.Join(w.ws, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// entries returns the ledger's entries after verifying it strictly.
func entries(t *testing.T, path string) []ledger.Entry {
	t.Helper()
	ledgertest.MustVerify(t, path, event.StrictOptions())
	l, err := ledger.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	h, err := l.Head()
	if err != nil {
		t.Fatal(err)
	}
	var out []ledger.Entry
	l.Range(0, h.Seq, func(e ledger.Entry) error { out = append(out, e); return nil })
	return out
}

func field(e ledger.Entry, name string) string {
	s, _ := ledger.FieldString(e.Data, name)
	return s
}

// subEntries groups the entries of each sub-agent by id, in order.
func subEntries(es []ledger.Entry) map[string][]ledger.Entry {
	out := map[string][]ledger.Entry{}
	for _, e := range es {
		if id := field(e, "subagent_id"); id != "" {
			out[id] = append(out[id], e)
		}
	}
	return out
}

func typesOf(es []ledger.Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Type
	}
	return out
}

// TestE2E_SubAgents_Parallel: the agent spawns two sub-agents, each its
// own sandboxed process (every thread Seccomp 2, NoNewPrivs 1, checked
// while they wait for an approval... here while running), each reading
// through the pipeline; both complete, their results reach the parent
// through agent_result, every entry they caused names them, and the
// ledger verifies strictly.
func TestE2E_SubAgents_Parallel(t *testing.T) {
	w := subWorld(t, "  max_concurrent: 4\n")
	m := w.start()
	out, errOut, code := w.run("send", "run the team")
	if code != 0 {
		t.Fatalf("opx send: %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "team: [README says # e2e") || !strings.Contains(out, "] [listed ") {
		t.Fatalf("the parent did not get both results:\n%s", out)
	}
	st, _ := w.status()
	w.stop(m)
	es := entries(t, st.LedgerPath)
	subs := subEntries(es)
	if len(subs) != 2 {
		t.Fatalf("%d sub-agents in the ledger, want 2", len(subs))
	}
	var session string
	for id, list := range subs {
		ts := typesOf(list)
		if ts[0] != event.TypeSubAgentSpawned || ts[len(ts)-1] == "" {
			t.Errorf("%s: first entry %s", id, ts[0])
		}
		for _, want := range []string{event.TypeAgentSpawned, event.TypeSandboxCanary, event.TypeAgentReady, event.TypeProcessRequest,
			event.TypeLLMRequest, event.TypeLLMResponse, event.TypeToolProposed, event.TypeShieldVerdict, event.TypeExecStarted,
			event.TypeExecCompleted, event.TypeToolResult, event.TypeResponseComplete, event.TypeSubAgentCompleted} {
			if count(ts, want) == 0 {
				t.Errorf("%s has no %s: %v", id, want, ts)
			}
		}
		for _, e := range list {
			if session == "" {
				session = e.Session
			}
			if e.Session != session {
				t.Errorf("%s: entry %d in session %s, not the parent's %s", id, e.Seq, e.Session, session)
			}
			if e.Type == event.TypeSandboxCanary && !strings.Contains(string(e.Data), `"action":"accepted"`) {
				t.Errorf("%s: canary not accepted: %s", id, e.Data)
			}
		}
	}
}

// waitEntry waits until the ledger of the running engine has an entry
// for which match holds, and returns it.
func (w *world) waitEntry(what string, match func(ledger.Entry) bool) ledger.Entry {
	w.t.Helper()
	var found ledger.Entry
	file := filepath.Join(w.t.TempDir(), "export.jsonl")
	waitFor(w.t, what, func() bool {
		os.Remove(file)
		if _, _, code := w.run("ledger", "export", "-o", file); code != 0 {
			return false
		}
		b, _ := os.ReadFile(file)
		for _, line := range strings.Split(string(b), "\n") {
			if line == "" {
				continue
			}
			e, err := ledger.ParseEntry([]byte(line))
			if err == nil && match(e) {
				found = e
				return true
			}
		}
		return false
	})
	return found
}

// threadsConfined checks every thread of pid for Seccomp 2 and NoNewPrivs 1.
func threadsConfined(t *testing.T, pid int) {
	t.Helper()
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", pid))
	if len(tasks) < 2 {
		t.Fatalf("sub-agent %d has %d threads", pid, len(tasks))
	}
	for _, task := range tasks {
		b, err := os.ReadFile(task)
		if err != nil {
			continue // the thread ended
		}
		if !strings.Contains(string(b), "Seccomp:\t2\n") || !strings.Contains(string(b), "NoNewPrivs:\t1\n") {
			t.Errorf("%s lacks Seccomp: 2 or NoNewPrivs: 1", task)
		}
	}
}

var _ = json.Marshal
var _ = strconv.Itoa
var _ = syscall.SIGKILL
var _ = time.Second
