package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opx-dev/opx/cli"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/ledgertest"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	grpcstatus "google.golang.org/grpc/status"
)

// subagentTranscript scripts the parent (a user message naming what to
// spawn) and each sub-agent (its task is its user message). A spawn
// result starts with the sub-agent's id: its first 16 bytes.
const subagentTranscript = `{"model": "opx-scripted-1", "turns": [
 {"match": "^run the team$", "steps": [
  {"tool_calls": [
    {"name": "spawn_agent", "arguments": "{\"task\": \"sub-read: summarise README.md\"}"},
    {"name": "spawn_agent", "arguments": "{\"task\": \"sub-list: list the workspace\", \"tools\": [\"list_directory\", \"read_file\", \"write_file\"]}"}]},
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
  {"text": "waiters: [{{(index .Results 3).Content}}] [{{if (index .Results 4).Error}}failed: {{end}}{{(index .Results 4).Content}}]"}]},
 {"match": "^run one waiter$", "steps": [
  {"tool_calls": [{"name": "spawn_agent", "arguments": "{\"task\": \"sub-wait: read the guarded file\"}"}]},
  {"tool_calls": [{"name": "agent_result", "arguments": "{\"id\": {{json (slice (index .Results 0).Content 0 16)}}}"}]},
  {"text": "waiter: [{{if (index .Results 1).Error}}failed: {{end}}{{(index .Results 1).Content}}]"}]},
 {"match": "^spawn a spawner$", "steps": [
  {"tool_calls": [{"name": "spawn_agent", "arguments": "{\"task\": \"sub-spawn: start another\"}"}]},
  {"tool_calls": [{"name": "agent_result", "arguments": "{\"id\": {{json (slice (index .Results 0).Content 0 16)}}}"}]},
  {"text": "spawner: [{{(index .Results 1).Content}}]"}]},
 {"match": "^sub-read:", "steps": [
  {"tool_calls": [{"name": "read_file", "arguments": "{\"path\": \"README.md\"}"}]},
  {"text": "README says {{head 1 .LastResult}}"}]},
 {"match": "^sub-list:", "steps": [
  {"tool_calls": [{"name": "list_directory", "arguments": "{\"path\": \".\"}"}]},
  {"tool_calls": [{"name": "write_file", "arguments": "{\"path\": \"listing.txt\", \"content\": {{json .LastResult}}}"}]},
  {"text": "listed {{lines (index .Results 0).Content}} entries{{if not .OK}} (write failed){{end}}"}]},
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

// startLogged is w.start, with the manager's output (engine and agents)
// logged when the test fails.
func (w *world) startLogged() *manager {
	m := w.start()
	w.t.Cleanup(func() {
		// Run with GOFLAGS=-race, the engine and agents report races here.
		if strings.Contains(m.out.String(), "DATA RACE") {
			w.t.Error("a data race in the engine or an agent")
		}
		if w.t.Failed() {
			w.t.Logf("opx start output:\n%s", m.out.String())
			file := filepath.Join(w.t.TempDir(), "failed.jsonl")
			if _, _, code := w.run("ledger", "export", "-o", file); code == 0 {
				b, _ := os.ReadFile(file)
				for _, line := range strings.Split(string(b), "\n") {
					w.t.Logf("%.300s", line)
				}
			}
		}
	})
	return m
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
	t.Parallel()
	w := subWorld(t, "  max_concurrent: 4\n")
	m := w.startLogged()
	out, errOut, code := w.run("send", "run the team")
	if code != 0 {
		t.Fatalf("opx send: %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "team: [README says # e2e") || !strings.Contains(out, "] [listed 3 entries]") {
		t.Fatalf("the parent did not get both results:\n%s", out)
	}
	if b, err := os.ReadFile(filepath.Join(w.ws, "listing.txt")); err != nil || !strings.Contains(string(b), "README.md") {
		t.Errorf("the sub-agent's write: %q %v", b, err)
	}
	st, _ := w.status()
	w.stop(m)
	es := entries(t, st.LedgerPath)
	subs := subEntries(es)
	if len(subs) != 2 {
		t.Fatalf("%d sub-agents in the ledger, want 2", len(subs))
	}
	// They ran in parallel: each one's entries begin before the other's
	// end.
	var spans [][2]uint64
	for _, list := range subs {
		spans = append(spans, [2]uint64{list[0].Seq, list[len(list)-1].Seq})
	}
	if spans[0][0] > spans[1][1] || spans[1][0] > spans[0][1] {
		t.Errorf("the sub-agents' entries do not interleave: %v", spans)
	}
	// The writer's snapshot names it, before its exec.started.
	snap := false
	for _, list := range subs {
		for _, e := range list {
			if e.Type == event.TypeSnapshot {
				snap = true
			}
		}
	}
	if !snap {
		t.Error("no chronicle.snapshot names a sub-agent")
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
			if e.Type == event.TypeAgentSpawned && (!strings.Contains(string(e.Data), `"mechanism":"landlock"`) || !strings.Contains(string(e.Data), `"seccomp":true`)) {
				t.Errorf("%s: started under %s", id, e.Data)
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
	var lastErr string
	defer func() {
		if w.t.Failed() && lastErr != "" {
			w.t.Logf("last export failure: %s", lastErr)
		}
	}()
	waitFor(w.t, what, func() bool {
		os.Remove(file)
		os.RemoveAll(strings.TrimSuffix(file, ".jsonl") + ".blobs") // its bundle
		if out, errOut, code := w.run("ledger", "export", "-o", file); code != 0 {
			lastErr = fmt.Sprintf("exit %d: %s%s", code, out, errOut)
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

// sendAsync runs opx send in the background.
func (w *world) sendAsync(msg string) <-chan string {
	c := make(chan string, 1)
	go func() {
		out, errOut, code := w.run("send", msg)
		c <- fmt.Sprintf("exit %d\n%s\n%s", code, out, errOut)
	}()
	return c
}

// subPid waits for agent.spawned of the sub-agent whose subagent.spawned
// task starts with task, and returns its id and pid.
func (w *world) subPid(task string) (string, int) {
	w.t.Helper()
	sp := w.waitEntry("subagent.spawned "+task, func(e ledger.Entry) bool {
		return e.Type == event.TypeSubAgentSpawned && strings.HasPrefix(field(e, "task"), task)
	})
	id := field(sp, "subagent_id")
	as := w.waitEntry("agent.spawned of "+id, func(e ledger.Entry) bool {
		return e.Type == event.TypeAgentSpawned && field(e, "subagent_id") == id
	})
	var a event.AgentSpawned
	json.Unmarshal(as.Data, &a)
	return id, a.PID
}

// pendingOf waits until sub-agent id has an approval pending and returns
// its id.
func (w *world) pendingOf(id string) string {
	w.t.Helper()
	var apr string
	waitFor(w.t, "an approval of "+id, func() bool {
		out, _, code := w.run("approve", "--json")
		var ls struct {
			Approvals []struct {
				ApprovalID string `json:"approval_id"`
				SubAgentID string `json:"subagent_id"`
			} `json:"approvals"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &ls) != nil {
			return false
		}
		for _, a := range ls.Approvals {
			if a.SubAgentID == id {
				apr = a.ApprovalID
				return true
			}
		}
		return false
	})
	return apr
}

// TestE2E_SubAgents_CancelAndApprove: two sub-agents each wait for a
// human; the parent cancels one (subagent.cancelled by its call, the
// process killed, its approval denied, nothing of it runs after), opx
// approve shows which sub-agent asks and approves the other's read,
// which then completes; every thread of a waiting sub-agent is confined
// (Seccomp 2, NoNewPrivs 1).
func TestE2E_SubAgents_CancelAndApprove(t *testing.T) {
	t.Parallel()
	w := subWorld(t, "  max_concurrent: 2\n")
	m := w.startLogged()
	sent := w.sendAsync("run the waiters")
	cancelled := w.waitEntry("subagent.cancelled", func(e ledger.Entry) bool { return e.Type == event.TypeSubAgentCancelled })
	if field(cancelled, "by_call_id") == "" {
		t.Errorf("subagent.cancelled names no call: %s", cancelled.Data)
	}
	id, pid := w.subPid("sub-wait: read the guarded file")
	if id == field(cancelled, "subagent_id") {
		t.Fatalf("the first sub-agent was cancelled, not the second")
	}
	apr := w.pendingOf(id)
	threadsConfined(t, pid)
	out, _, code := w.run("approve")
	if code != 0 || !strings.Contains(out, "sub-agent "+id) {
		t.Fatalf("opx approve does not say which sub-agent asks: %d\n%s", code, out)
	}
	if out, errOut, code := w.run("approve", apr); code != 0 || !strings.Contains(out, "of sub-agent "+id) {
		t.Fatalf("opx approve %s: %d\n%s%s", apr, code, out, errOut)
	}
	res := <-sent
	if !strings.Contains(res, "waiters: [got the guarded file") || !strings.Contains(res, "[failed: sub-agent "+field(cancelled, "subagent_id")+" was cancelled") {
		t.Fatalf("opx send:\n%s", res)
	}
	st, _ := w.status()
	w.stop(m)
	es := entries(t, st.LedgerPath)
	ends := map[string]string{}
	for _, e := range es {
		if event.SubAgentEnded(e.Type) {
			ends[field(e, "subagent_id")] = e.Type
		}
	}
	if ends[id] != event.TypeSubAgentCompleted || ends[field(cancelled, "subagent_id")] != event.TypeSubAgentCancelled {
		t.Errorf("ends: %v", ends)
	}
}

// TestE2E_SubAgents_Crash: its token, reused by another process, is
// refused; a sub-agent killed (SIGKILL of its pid) while it waits for a
// human is recorded as crashed (agent.crashed, then
// subagent.failed crashed), its approval is denied, and the parent learns
// it through agent_result.
func TestE2E_SubAgents_Crash(t *testing.T) {
	t.Parallel()
	w := subWorld(t, "  max_concurrent: 1\n")
	m := w.startLogged()
	sent := w.sendAsync("run one waiter")
	id, pid := w.subPid("sub-wait:")
	w.pendingOf(id)
	threadsConfined(t, pid)
	w.reuseToken(pid, id)
	w.kill(pid)
	res := <-sent
	if !strings.Contains(res, "waiter: [failed: sub-agent "+id+" crashed: sub-agent killed by signal killed") {
		t.Fatalf("opx send:\n%s", res)
	}
	st, _ := w.status()
	w.stop(m)
	es := entries(t, st.LedgerPath)
	ts := typesOf(subEntries(es)[id])
	crashed, failed := -1, -1
	for i, typ := range ts {
		switch typ {
		case event.TypeAgentCrashed:
			crashed = i
		case event.TypeSubAgentFailed:
			failed = i
		}
	}
	if crashed < 0 || failed < crashed {
		t.Errorf("want agent.crashed then subagent.failed: %v", ts)
	}
	for _, e := range subEntries(es)[id] {
		if e.Type == event.TypeApprovalResolved && !strings.Contains(string(e.Data), `"approved":false`) {
			t.Errorf("the crashed sub-agent's approval was not denied: %s", e.Data)
		}
	}
}

// reuseToken takes the token of the running sub-agent pid from its
// environment (as any process of the user that can read it could) and
// registers with it from this process: the engine refuses the second
// registration, records it, and the sub-agent works on.
func (w *world) reuseToken(pid int, id string) {
	t := w.t
	t.Helper()
	env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		t.Fatalf("read the sub-agent's environment: %v", err)
	}
	var tok string
	for _, kv := range strings.Split(string(env), "\x00") {
		if v, ok := strings.CutPrefix(kv, cli.EnvSubAgentToken+"="); ok {
			tok = v
		}
	}
	if len(tok) != 32 {
		t.Fatalf("no sub-agent token in the environment of %d", pid)
	}
	out, _, _ := w.run("status", "--json")
	var st struct {
		GRPCPort int `json:"grpc_port"`
	}
	json.Unmarshal([]byte(out), &st)
	conn, err := grpc.NewClient(fmt.Sprintf("127.0.0.1:%d", st.GRPCPort), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx := metadata.AppendToOutgoingContext(context.Background(), opxv1.AgentTokenHeader, tok)
	s, err := opxv1.NewSubAgentServiceClient(conn).RunSubAgent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s.Send(&opxv1.AgentEvent{Event: &opxv1.AgentEvent_AgentReady{AgentReady: &opxv1.AgentReady{AgentId: id, Token: tok,
		SandboxCanaryJson: `{"verified":false,"status":"unavailable","platform":"linux","mechanism":"none","probes":[],"summary":"x","timestamp":"2026-11-26T00:00:00Z"}`}}})
	if _, err := s.Recv(); grpcstatus.Code(err) != codes.PermissionDenied {
		t.Errorf("a second registration with sub-agent %s's token: %v, want PermissionDenied", id, err)
	}
	w.waitEntry("the refused registration", func(e ledger.Entry) bool {
		return e.Type == event.TypeAgentError && field(e, "subagent_id") == id && strings.Contains(field(e, "message"), "a second registration")
	})
}

// TestE2E_SubAgents_TimeoutAndRecursion: a sub-agent still waiting at
// agents.timeout is killed and timed out; a sub-agent that tries to spawn
// is refused (subagent:not-granted) and says so in its answer.
func TestE2E_SubAgents_TimeoutAndRecursion(t *testing.T) {
	t.Parallel()
	// The timeout: a waiter never ends, so a short timeout always fires,
	// however loaded the machine is.
	t.Run("timeout", func(t *testing.T) {
		t.Parallel()
		w := subWorld(t, "  timeout: 300ms\n")
		m := w.startLogged()
		res := <-w.sendAsync("run one waiter")
		if !strings.Contains(res, "waiter: [failed: sub-agent sub_") || !strings.Contains(res, "timed out after 300ms") {
			t.Fatalf("opx send:\n%s", res)
		}
		st, _ := w.status()
		w.stop(m)
		if n := countEntries(t, st.LedgerPath, func(e ledger.Entry) bool { return e.Type == event.TypeSubAgentTimedOut }); n != 1 {
			t.Errorf("%d subagent.timed_out, want 1", n)
		}
	})
	// The recursion: a sub-agent's own spawn is refused. It must finish
	// in its time, so its time is generous: with the short timeout above
	// it timed out instead on a loaded CI machine (session 19), before its
	// refused spawn came back.
	t.Run("recursion", func(t *testing.T) {
		t.Parallel()
		w := subWorld(t, "  timeout: 120s\n")
		m := w.startLogged()
		res := <-w.sendAsync("spawn a spawner")
		if !strings.Contains(res, "subagent:not-granted") {
			t.Fatalf("opx send:\n%s", res)
		}
		st, _ := w.status()
		w.stop(m)
		n := countEntries(t, st.LedgerPath, func(e ledger.Entry) bool {
			return e.Type == event.TypeShieldVerdict && field(e, "rule") == "subagent:not-granted" && field(e, "subagent_id") != ""
		})
		if n != 1 {
			t.Errorf("%d subagent:not-granted verdicts, want 1", n)
		}
	})
}

// countEntries counts the entries of the ledger at path that match.
func countEntries(t *testing.T, path string, match func(ledger.Entry) bool) int {
	t.Helper()
	n := 0
	for _, e := range entries(t, path) {
		if match(e) {
			n++
		}
	}
	return n
}

// TestE2E_SubAgents_EngineStopAndCrash: opx stop while a sub-agent waits
// ends it (subagent.failed engine_stopped) and its process before
// engine.stopped; an engine killed with SIGKILL takes its sub-agent with
// it (the parent-death signal), and the next engine records
// subagent.failed engine_crashed for it before its engine.started.
func TestE2E_SubAgents_EngineStopAndCrash(t *testing.T) {
	t.Parallel()
	w := subWorld(t, "  max_concurrent: 2\n")
	m := w.startLogged()
	sent := w.sendAsync("run one waiter")
	id, pid := w.subPid("sub-wait:")
	w.pendingOf(id)
	st, _ := w.status()
	w.stop(m)
	<-sent
	if !gone(pid) {
		t.Errorf("sub-agent %d outlived its engine's stop", pid)
	}
	es := entries(t, st.LedgerPath)
	var failedAt, stoppedAt uint64
	for _, e := range es {
		switch {
		case e.Type == event.TypeSubAgentFailed && field(e, "subagent_id") == id && field(e, "reason") == event.SubAgentEngineStopped:
			failedAt = e.Seq
		case e.Type == event.TypeEngineStopped:
			stoppedAt = e.Seq
		}
	}
	if failedAt == 0 || failedAt > stoppedAt {
		t.Fatalf("subagent.failed engine_stopped at %d, engine.stopped at %d", failedAt, stoppedAt)
	}

	m = w.startLogged()
	sent = w.sendAsync("run one waiter")
	var id2 string
	sp := w.waitEntry("a second sub-agent", func(e ledger.Entry) bool {
		return e.Type == event.TypeSubAgentSpawned && field(e, "subagent_id") != id
	})
	id2 = field(sp, "subagent_id")
	as := w.waitEntry("its process", func(e ledger.Entry) bool {
		return e.Type == event.TypeAgentSpawned && field(e, "subagent_id") == id2
	})
	var a event.AgentSpawned
	json.Unmarshal(as.Data, &a)
	w.pendingOf(id2)
	st, _ = w.status()
	w.kill(st.EnginePID)
	<-sent
	waitFor(t, "the sub-agent to die with its engine", func() bool { return gone(a.PID) })
	waitFor(t, "a new engine", func() bool {
		s, code := w.status()
		return code == 0 && s.EnginePID != st.EnginePID && s.AgentPID != 0
	})
	w.stop(m)
	es = entries(t, st.LedgerPath)
	var crashedAt, failed2, startedAt uint64
	for _, e := range es {
		switch {
		case e.Type == event.TypeEngineCrashed:
			crashedAt = e.Seq
		case e.Type == event.TypeSubAgentFailed && field(e, "subagent_id") == id2:
			if field(e, "reason") != event.SubAgentEngineCrashed {
				t.Errorf("sub-agent %s failed %s, want engine_crashed", id2, field(e, "reason"))
			}
			failed2 = e.Seq
		case e.Type == event.TypeEngineStarted && crashedAt != 0 && startedAt == 0:
			startedAt = e.Seq
		}
	}
	if crashedAt == 0 || failed2 < crashedAt || failed2 > startedAt {
		t.Fatalf("engine.crashed %d, subagent.failed engine_crashed %d, engine.started %d", crashedAt, failed2, startedAt)
	}
}
