package hooks

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/engine/judge"
	"github.com/opx-dev/opx/engine/llm"
	"github.com/opx-dev/opx/fixtures"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"github.com/opx-dev/opx/shield"
)

// hookWorld is an engine with the default Shield policy over a temporary
// workspace, and a set of hook sessions bound to it (not the engine's
// own: these tests call it directly).
type hookWorld struct {
	ws string
	l  *ledger.Ledger
	e  *engine.Engine
	h  *sessions
}

func newHookWorld(t *testing.T) *hookWorld {
	t.Helper()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "README.md"), []byte("# readme\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	l, err := ledger.Create(filepath.Join(t.TempDir(), "ledger.db"), ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	policy, err := shield.ParsePolicy(fixtures.DefaultPolicy)
	if err != nil {
		t.Fatal(err)
	}
	home, _ := os.UserHomeDir()
	sh := shield.New(shield.Config{Workspace: ws, Home: home, Policy: policy})
	tr, err := llm.ParseTranscript(fixtures.DefaultTranscript)
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(engine.Options{Workspace: ws, Ledger: l, Provider: llm.NewScripted(tr), ClientToken: "0123456789abcdef0123456789abcdef",
		Version: "test", Policy: "default", PolicyText: fixtures.DefaultPolicy, Evaluator: judge.ShieldEvaluator{S: sh}, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	h := newSessions()
	h.Bind(e)
	return &hookWorld{ws: ws, l: l, e: e, h: h}
}

// claude is a Claude Code event of session s1 in the workspace.
func (w *hookWorld) claude(name string, fields map[string]any) *opxv1.HookEventRequest {
	m := map[string]any{"session_id": "s1", "transcript_path": "/tmp/t.jsonl", "cwd": w.ws, "hook_event_name": name}
	for k, v := range fields {
		m[k] = v
	}
	b, _ := json.Marshal(m)
	return &opxv1.HookEventRequest{Agent: "claude", Event: b}
}

func (w *hookWorld) send(t *testing.T, req *opxv1.HookEventRequest) *opxv1.HookEventReply {
	t.Helper()
	r, err := w.h.event(context.Background(), req)
	if err != nil {
		t.Fatalf("event: %v", err)
	}
	return r
}

// entries are the ledger's entries of type typ.
func (w *hookWorld) entries(t *testing.T, typ string) []event.Payload {
	t.Helper()
	var out []event.Payload
	if err := w.l.Range(0, ^uint64(0), func(e ledger.Entry) error {
		if e.Type == typ {
			p, err := event.Decode(e)
			if err != nil {
				return err
			}
			out = append(out, p)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestHooks_ShellCallRecordedAndCausal: a shell command is judged,
// snapshotted and started before the hook answers allow; the agent's
// report completes it with what changed; the whole verifies causally.
func TestHooks_ShellCallRecordedAndCausal(t *testing.T) {
	w := newHookWorld(t)
	w.send(t, w.claude("SessionStart", map[string]any{"source": "startup"}))
	w.send(t, w.claude("UserPromptSubmit", map[string]any{"prompt": "make two files", "prompt_id": "p1"}))
	in := map[string]any{"command": "echo one > one.txt && echo two > two.txt"}
	r := w.send(t, w.claude("PreToolUse", map[string]any{"tool_name": "Bash", "tool_input": in, "tool_use_id": "toolu_1"}))
	if r.Decision != "allow" || len(r.CallIds) != 1 {
		t.Fatalf("pre-tool reply %+v", r)
	}
	if n := len(w.entries(t, event.TypeExecStarted)); n != 1 {
		t.Fatalf("%d exec.started before the agent runs the call", n)
	}
	// The agent runs it.
	for _, f := range []string{"one", "two"} {
		if err := os.WriteFile(filepath.Join(w.ws, f+".txt"), []byte(f+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w.send(t, w.claude("PostToolUse", map[string]any{"tool_name": "Bash", "tool_input": in, "tool_use_id": "toolu_1",
		"tool_response": map[string]any{"stdout": "", "stderr": "", "interrupted": false}, "duration_ms": 12}))
	done := w.entries(t, event.TypeExecCompleted)
	if len(done) != 1 {
		t.Fatalf("%d exec.completed", len(done))
	}
	x := done[0].(*event.ExecCompleted)
	var changed []string
	for _, p := range x.Post {
		changed = append(changed, p.Path)
	}
	if x.CallID != r.CallIds[0] || strings.Join(changed, ",") != "one.txt,two.txt" || x.Interrupted {
		t.Errorf("exec.completed %+v", x)
	}
	if calls := w.entries(t, event.TypeHookToolCall); len(calls) != 1 || calls[0].(*event.HookToolCall).AgentTool != "Bash" {
		t.Errorf("hook.tool_call %+v", calls)
	}
	if len(w.entries(t, event.TypeSnapshot)) != 1 || len(w.entries(t, event.TypeClientMessage)) != 1 {
		t.Errorf("no snapshot or no user message")
	}
	w.send(t, w.claude("SessionEnd", map[string]any{"reason": "other"}))
	checkCausal(t, w.l)
}

// TestHooks_CredentialReadDenied: Shield's block comes back as a deny
// with its reason, and nothing is started.
func TestHooks_CredentialReadDenied(t *testing.T) {
	w := newHookWorld(t)
	r := w.send(t, w.claude("PreToolUse", map[string]any{"tool_name": "Bash", "tool_input": map[string]any{"command": "cat ~/.ssh/id_rsa"}, "tool_use_id": "toolu_9"}))
	if r.Decision != "deny" || !strings.Contains(r.Reason, "Shield") {
		t.Fatalf("reply %+v", r)
	}
	if n := len(w.entries(t, event.TypeExecStarted)); n != 0 {
		t.Errorf("%d exec.started for a blocked call", n)
	}
	checkCausal(t, w.l)
}

// TestHooks_InterruptedAtSessionEnd: an allowed call whose report never
// comes is closed at the session's end, as interrupted, with what the
// workspace holds.
func TestHooks_InterruptedAtSessionEnd(t *testing.T) {
	w := newHookWorld(t)
	in := map[string]any{"file_path": filepath.Join(w.ws, "new.txt"), "content": "hello\n"}
	r := w.send(t, w.claude("PreToolUse", map[string]any{"tool_name": "Write", "tool_input": in, "tool_use_id": "toolu_2"}))
	if r.Decision != "allow" {
		t.Fatalf("reply %+v", r)
	}
	if err := os.WriteFile(filepath.Join(w.ws, "new.txt"), []byte("hel"), 0o644); err != nil {
		t.Fatal(err)
	}
	w.send(t, w.claude("SessionEnd", map[string]any{"reason": "other"}))
	done := w.entries(t, event.TypeExecCompleted)
	if len(done) != 1 || !done[0].(*event.ExecCompleted).Interrupted {
		t.Fatalf("exec.completed %+v", done)
	}
	x := done[0].(*event.ExecCompleted)
	if len(x.Post) != 1 || x.Post[0].Path != "new.txt" || x.Post[0].Hash != ledger.Sum([]byte("hel")).String() {
		t.Errorf("post-state %+v, want new.txt as the workspace holds it", x.Post)
	}
	checkCausal(t, w.l)
}

// checkCausal runs strict verification's causality over the ledger.
func checkCausal(t *testing.T, l *ledger.Ledger) {
	t.Helper()
	c := event.NewCausality()
	if err := l.Range(0, ^uint64(0), func(e ledger.Entry) error {
		if f := c.Check(&e); f != nil {
			t.Errorf("causality: %+v", f)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// writeConfig writes the workspace's .opx/config.yaml.
func (w *hookWorld) writeConfig(t *testing.T, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(w.ws, ".opx"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.ws, ".opx", "config.yaml"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestHooks_EscalationWaitsForDeny: a call Shield asks a human about
// waits for the answer (opx deny, here through Approvals); the denial
// is the hook's answer, and nothing started.
func TestHooks_EscalationWaitsForDeny(t *testing.T) {
	w := newHookWorld(t)
	sub := w.e.Subscribe(SessionID("claude", "s1"))
	defer sub.Close()
	go func() {
		for ev := range sub.C {
			if ev.Type != "approval_requested" {
				continue
			}
			var d struct {
				ApprovalID string `json:"approval_id"`
			}
			_ = json.Unmarshal(ev.Data, &d)
			_, _ = w.e.Approvals().Resolve(d.ApprovalID, false, "alice", "not today")
		}
	}()
	r := w.send(t, w.claude("PreToolUse", map[string]any{"tool_name": "Bash", "tool_input": map[string]any{"command": "git push origin main"}, "tool_use_id": "toolu_3"}))
	if r.Decision != "deny" || !strings.Contains(r.Reason, "not today") {
		t.Fatalf("reply %+v", r)
	}
	if n := len(w.entries(t, event.TypeExecStarted)); n != 0 {
		t.Errorf("%d exec.started for a denied call", n)
	}
	checkCausal(t, w.l)
}

// TestHooks_EscalationAsk: with hooks.escalation: ask, the escalation is
// handed to the CLI's own prompt: the approval is recorded as handed
// over and the hook answers ask.
func TestHooks_EscalationAsk(t *testing.T) {
	w := newHookWorld(t)
	w.writeConfig(t, "hooks:\n  escalation: ask\n")
	r := w.send(t, w.claude("PreToolUse", map[string]any{"tool_name": "Bash", "tool_input": map[string]any{"command": "git push origin main"}, "tool_use_id": "toolu_4"}))
	if r.Decision != "ask" || !strings.Contains(r.Reason, "git-push") {
		t.Fatalf("reply %+v", r)
	}
	res := w.entries(t, event.TypeApprovalResolved)
	if len(res) != 1 || !strings.Contains(res[0].(*event.ApprovalResolved).By, "permission prompt") {
		t.Errorf("approval.resolved %+v", res)
	}
	// The user declined at the prompt: no report comes; the session's
	// end closes the call.
	w.send(t, w.claude("SessionEnd", map[string]any{"reason": "other"}))
	if done := w.entries(t, event.TypeExecCompleted); len(done) != 1 || !done[0].(*event.ExecCompleted).Interrupted {
		t.Errorf("exec.completed %+v", done)
	}
	checkCausal(t, w.l)
}

// TestHooks_AgentKilledMidTool: the agent's process dies while it runs
// an allowed call (no report, no session end): the call is closed as
// interrupted and the session's end recorded as the agent's death.
func TestHooks_AgentKilledMidTool(t *testing.T) {
	w := newHookWorld(t)
	agent := exec.Command("sleep", "1000")
	if err := agent.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = agent.Process.Kill(); _ = agent.Wait() })
	req := w.claude("PreToolUse", map[string]any{"tool_name": "Bash", "tool_input": map[string]any{"command": "sleep 600"}, "tool_use_id": "toolu_5"})
	req.AgentPid = int32(agent.Process.Pid)
	if r := w.send(t, req); r.Decision != "allow" {
		t.Fatalf("reply %+v", r)
	}
	if err := agent.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = agent.Wait()
	deadline := time.Now().Add(30 * time.Second)
	for len(w.entries(t, event.TypeHookEvent)) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no end recorded 30 s after the agent died")
		}
		time.Sleep(10 * time.Millisecond)
	}
	done := w.entries(t, event.TypeExecCompleted)
	if len(done) != 1 || !done[0].(*event.ExecCompleted).Interrupted || !strings.Contains(done[0].(*event.ExecCompleted).Result, "exited") {
		t.Errorf("exec.completed %+v", done)
	}
	if ev := w.entries(t, event.TypeHookEvent); ev[0].(*event.HookEvent).Kind != "session-end" {
		t.Errorf("hook.event %+v", ev)
	}
	checkCausal(t, w.l)
}

// TestHooks_AgentToolsJudged: the agents' own bookkeeping is allowed, a
// web search is judged by its query (a secret in it is blocked), and a
// tool opx does not know is asked about (here: nobody answers in time).
func TestHooks_AgentToolsJudged(t *testing.T) {
	w := newHookWorld(t)
	for i, c := range []struct {
		tool     string
		in       map[string]any
		decision string
	}{
		{"TodoWrite", map[string]any{"todos": []any{map[string]any{"content": "tidy", "status": "pending"}}}, "allow"},
		{"WebSearch", map[string]any{"query": "golang generics tutorial"}, "allow"},
		{"WebSearch", map[string]any{"query": "who owns ghp_Zx8Kq2Lm9Np4Rt7Vw1Ys3Bc6Df0Gh5Jk8Ll1a"}, "deny"},
		{"NewFancyTool", map[string]any{"x": 1}, "deny"},
	} {
		req := w.claude("PreToolUse", map[string]any{"tool_name": c.tool, "tool_input": c.in, "tool_use_id": fmt.Sprintf("toolu_j%d", i)})
		req.DeadlineMs = 1500
		r := w.send(t, req)
		if r.Decision != c.decision {
			t.Errorf("%s %v: %s (%s), want %s", c.tool, c.in, r.Decision, r.Reason, c.decision)
		}
		if c.tool == "NewFancyTool" && !strings.Contains(r.Reason, "no decision") {
			t.Errorf("unknown tool: %s, want it asked about", r.Reason)
		}
	}
}
