package engine_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/engine/grpcapi"
	"github.com/opx-dev/opx/engine/judge"
	"github.com/opx-dev/opx/engine/llm"
	"github.com/opx-dev/opx/fixtures"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/ledgertest"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"github.com/opx-dev/opx/shield"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// escalationPolicy escalates reads under t2/ to tier 2 and under t3/ to a
// human, while an allow rule matches every read too: verify must win over
// allow, and the deny rule over both.
const escalationPolicy = `version: 1
default: deny
deny:
  - {name: no-secrets, paths: ["t3/secret/**"]}
verify:
  - {name: model-reads, tools: [read_file], paths: ["t2/**"], tier: 2}
  - {name: human-reads, tools: [read_file], paths: ["t3/**"], tier: 3}
allow:
  - {name: reads, tools: [read_file, list_directory], paths: ["**"]}
`

// harness is an engine on loopback gRPC with a test agent connected and
// one message in flight, so the test can propose tool calls and watch the
// client's event stream.
type harness struct {
	t      *testing.T
	ws     string
	path   string
	l      *ledger.Ledger
	conn   *grpc.ClientConn
	ctx    context.Context // client token, client name "test"
	client opxv1.ClientServiceClient
	agent  opxv1.AgentService_RunSessionClient
	events opxv1.ClientService_SendMessageClient
	msg    string
	cancel context.CancelFunc
	done   chan error
	closed bool
}

// startHarness runs an engine on the ledger at path (created when it does
// not exist) and workspace ws ("" makes one), under escalationPolicy.
func startHarness(t *testing.T, ws, path string, tune ...func(*engine.Options)) *harness {
	t.Helper()
	if ws == "" {
		ws = t.TempDir()
		for _, f := range []string{"README.md", "t2/safe.md", "t2/danger.md", "t2/garbled.md", "t2/fail.md", "t3/a.md", "t3/secret/key.md"} {
			p := filepath.Join(ws, f)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte("content of "+f+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if path == "" {
		path = filepath.Join(t.TempDir(), "ledger.db")
	}
	l, err := ledger.Open(path, ledger.Options{})
	if errors.Is(err, ledger.ErrNotExist) {
		l, err = ledger.Create(path, ledger.Options{})
	}
	if err != nil {
		t.Fatal(err)
	}
	policy, err := shield.ParsePolicy([]byte(escalationPolicy))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := llm.ParseTranscript(fixtures.DefaultTranscript)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, ws: ws, path: path, l: l, done: make(chan error, 1)}
	tokens := make(chan string, 4)
	pr, pw := io.Pipe()
	opts := engine.Options{Services: grpcapi.Register, Workspace: ws, Ledger: l, Provider: llm.NewScripted(tr), ClientToken: clientToken, Version: "test",
		Policy: "escalation", Stdout: pw, Logf: t.Logf, ApprovalTimeout: time.Minute,
		Evaluator: judge.ShieldEvaluator{S: shield.New(shield.Config{Workspace: ws, Home: "/home/nobody", Policy: policy})},
		SpawnAgent: func(ctx context.Context, launch engine.AgentLaunch) (*exec.Cmd, error) {
			cmd := exec.Command("sleep", "60")
			err := cmd.Start()
			go func() { time.Sleep(20 * time.Millisecond); tokens <- launch.Token }()
			return cmd, err
		}}
	for _, f := range tune {
		f(&opts)
	}
	e, err := engine.New(opts)
	if err != nil {
		l.Close()
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go func() { h.done <- e.Run(ctx) }()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "PORT:") {
		t.Fatalf("start-up line %q, %v", line, err)
	}
	go io.Copy(io.Discard, pr)
	h.conn, err = grpc.NewClient("127.0.0.1:"+strings.TrimSpace(strings.TrimPrefix(line, "PORT:")), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.stop)
	h.ctx = metadata.AppendToOutgoingContext(context.Background(), engine.TokenHeader, clientToken, "opx-client", "test")
	h.client = opxv1.NewClientServiceClient(h.conn)
	tok := <-tokens
	h.agent, err = opxv1.NewAgentServiceClient(h.conn).RunSession(agentCtx(tok))
	if err != nil {
		t.Fatal(err)
	}
	if err := h.agent.Send(&opxv1.AgentEvent{Event: &opxv1.AgentEvent_AgentReady{AgentReady: &opxv1.AgentReady{
		AgentId: "test-agent", Token: tok, SandboxCanaryJson: unavailableCanary}}}); err != nil {
		t.Fatal(err)
	}
	if h.events, err = h.client.SendMessage(h.ctx, &opxv1.ClientMessageRequest{Content: "hello"}); err != nil {
		t.Fatal(err)
	}
	h.msg = mustRecv(t, h.agent).GetProcessRequest().GetMessageId()
	if h.msg == "" {
		t.Fatal("no process request")
	}
	return h
}

// stop ends the message, stops the engine, closes the ledger and verifies
// it strictly.
func (h *harness) stop() {
	if h.closed {
		return
	}
	h.closed = true
	h.agent.Send(&opxv1.AgentEvent{Event: &opxv1.AgentEvent_ResponseComplete{ResponseComplete: &opxv1.AgentResponseComplete{MessageId: h.msg, Content: "done"}}})
	h.agent.CloseSend()
	h.cancel()
	if err := <-h.done; err != nil {
		h.t.Errorf("engine Run: %v", err)
	}
	h.conn.Close()
	if err := h.l.Close(); err != nil {
		h.t.Error(err)
	}
	ledgertest.MustVerify(h.t, h.path, event.StrictOptions())
}

// propose sends a tool call for the message in flight.
func (h *harness) propose(callID, tool, args string) {
	h.t.Helper()
	if err := h.agent.Send(&opxv1.AgentEvent{Event: &opxv1.AgentEvent_ToolCall{ToolCall: &opxv1.ToolCallProposed{
		CallId: callID, ToolName: tool, ArgumentsJson: args, MessageId: h.msg}}}); err != nil {
		h.t.Fatal(err)
	}
}

// result waits for the agent's result of callID.
func (h *harness) result(callID string) *opxv1.ToolResultDelivery {
	h.t.Helper()
	for {
		if r := mustRecv(h.t, h.agent).GetToolResult(); r != nil && r.CallId == callID {
			return r
		}
	}
}

// call proposes a call and returns its result.
func (h *harness) call(callID, tool, args string) *opxv1.ToolResultDelivery {
	h.t.Helper()
	h.propose(callID, tool, args)
	return h.result(callID)
}

// event waits for the client's next event of type typ and decodes its data.
func (h *harness) event(typ string) (*opxv1.PipelineEvent, map[string]any) {
	h.t.Helper()
	for {
		ev, err := h.events.Recv()
		if err != nil {
			h.t.Fatalf("waiting for %s: %v", typ, err)
		}
		if ev.Type == typ {
			var d map[string]any
			if err := json.Unmarshal(ev.Data, &d); err != nil {
				h.t.Fatal(err)
			}
			return ev, d
		}
	}
}

// entries returns the committed entries about callID (and engine.stopped).
func (h *harness) entries(callID string) []ledger.Entry {
	h.t.Helper()
	if err := h.l.Sync(context.Background()); err != nil {
		h.t.Fatal(err)
	}
	head, _ := h.l.Head()
	var out []ledger.Entry
	h.l.Range(0, head.Seq, func(e ledger.Entry) error {
		var f struct {
			CallID string `json:"call_id"`
		}
		json.Unmarshal(e.Data, &f)
		if f.CallID == callID || e.Type == event.TypeEngineStopped {
			out = append(out, e)
		}
		return nil
	})
	return out
}

// story renders a call's entries as "type" or "type:decision/tier/rule".
func story(es []ledger.Entry) string {
	var out []string
	for _, e := range es {
		s := e.Type
		switch p, _ := event.Decode(e); x := p.(type) {
		case *event.ShieldVerdict:
			s += fmt.Sprintf(":%s/%d/%s", x.Decision, x.Tier, x.Rule)
		case *event.ApprovalResolved:
			if x.Approved {
				s += ":approved/" + x.By
			} else {
				s += ":denied/" + x.By
			}
		}
		out = append(out, s)
	}
	return strings.Join(out, " ")
}

// TestApproval_Approved: a tier 3 escalation waits for a human; once a
// client approves it (recorded, by the client's name), the tool runs, and
// exec.started follows approval.resolved. The id cannot be answered twice.
func TestApproval_Approved(t *testing.T) {
	h := startHarness(t, "", "")
	h.propose("c1", "read_file", `{"path":"t3/a.md"}`)
	ev, d := h.event("approval_requested")
	id, _ := d["approval_id"].(string)
	if !strings.HasPrefix(id, "apr_") || d["call_id"] != "c1" || d["tool"] != "read_file" || d["arguments"] != `{"path":"t3/a.md"}` ||
		!strings.Contains(d["reason"].(string), "human-reads") || d["timeout_ms"] != float64(60000) || ev.Seq == 0 {
		t.Fatalf("approval_requested %v", d)
	}
	ls, err := h.client.ListApprovals(h.ctx, &opxv1.ListApprovalsRequest{})
	if err != nil || len(ls.Approvals) != 1 || ls.Approvals[0].ApprovalId != id || ls.Approvals[0].CallId != "c1" || ls.Approvals[0].Seq != ev.Seq ||
		ls.Approvals[0].MessageId != h.msg || ls.Approvals[0].Arguments != `{"path":"t3/a.md"}` || ls.Approvals[0].Tool != "read_file" ||
		ls.Approvals[0].ExpiresAt-ls.Approvals[0].RequestedAt != int64(time.Minute) {
		t.Fatalf("ListApprovals = %v, %v", ls, err)
	}
	if ls, err := h.client.ListApprovals(h.ctx, &opxv1.ListApprovalsRequest{SessionId: "ses_other"}); err != nil || len(ls.Approvals) != 0 {
		t.Errorf("ListApprovals of another session = %v, %v", ls, err)
	}
	res, err := h.client.ResolveApproval(h.ctx, &opxv1.ApprovalRequest{ApprovalId: id, Approved: true, Reason: "fine"})
	if err != nil || !res.Resolved || !res.Approved || res.By != "test" || res.CallId != "c1" || res.Seq <= ev.Seq {
		t.Fatalf("ResolveApproval = %v, %v", res, err)
	}
	if r := h.result("c1"); r.IsError || r.Content != "content of t3/a.md\n" {
		t.Fatalf("result %v", r)
	}
	if _, err := h.client.ResolveApproval(h.ctx, &opxv1.ApprovalRequest{ApprovalId: id, Approved: false}); status.Code(err) != codes.NotFound {
		t.Errorf("second answer: %v, want NotFound", err)
	}
	if ls, _ := h.client.ListApprovals(h.ctx, &opxv1.ListApprovalsRequest{}); len(ls.GetApprovals()) != 0 {
		t.Errorf("still pending: %v", ls)
	}
	want := "agent.tool_call tool.proposed shield.verdict:escalate/3/policy:human-reads shield.verdict:allow/1/heuristics:none " +
		"shield.verdict:escalate/3/tier3:human approval.requested approval.resolved:approved/test shield.verdict:allow/3/tier3:approved " +
		"exec.started exec.completed engine.tool_result"
	if got := story(h.entries("c1")); got != want {
		t.Errorf("ledger:\n%s\nwant\n%s", got, want)
	}
}

// TestApproval_Denied: a denied call never runs, and the agent hears a
// human denied it.
func TestApproval_Denied(t *testing.T) {
	h := startHarness(t, "", "")
	h.propose("c1", "read_file", `{"path":"t3/a.md"}`)
	_, d := h.event("approval_requested")
	if _, err := h.client.ResolveApproval(h.ctx, &opxv1.ApprovalRequest{ApprovalId: d["approval_id"].(string), Reason: "not now"}); err != nil {
		t.Fatal(err)
	}
	if r := h.result("c1"); !r.IsError || !strings.Contains(r.Content, "denied by a human") || !strings.Contains(r.Content, "not now") {
		t.Fatalf("result %v", r)
	}
	_, rd := h.event("approval_resolved")
	if rd["approved"] != false || rd["by"] != "test" {
		t.Errorf("approval_resolved %v", rd)
	}
	got := story(h.entries("c1"))
	if !strings.Contains(got, "approval.requested approval.resolved:denied/test shield.verdict:block/3/tier3:denied engine.tool_result") || strings.Contains(got, "exec.") {
		t.Errorf("ledger: %s", got)
	}
}

// TestApproval_Timeout: nobody answers; the timeout denies, recorded by
// "timeout", and nothing runs.
func TestApproval_Timeout(t *testing.T) {
	h := startHarness(t, "", "", func(o *engine.Options) { o.ApprovalTimeout = 50 * time.Millisecond })
	if r := h.call("c1", "read_file", `{"path":"t3/a.md"}`); !r.IsError || !strings.Contains(r.Content, "tier3:timeout") {
		t.Fatalf("result %v", r)
	}
	got := story(h.entries("c1"))
	if !strings.Contains(got, "approval.requested approval.resolved:denied/timeout shield.verdict:block/3/tier3:timeout") || strings.Contains(got, "exec.") {
		t.Errorf("ledger: %s", got)
	}
}

// TestApproval_UnknownID: an id never issued is NotFound, an empty one is
// refused, and neither is recorded.
func TestApproval_UnknownID(t *testing.T) {
	h := startHarness(t, "", "")
	before := len(h.entries("(none)"))
	for id, code := range map[string]codes.Code{"apr_0000000000000000": codes.NotFound, "c1": codes.NotFound, " ": codes.InvalidArgument} {
		if _, err := h.client.ResolveApproval(h.ctx, &opxv1.ApprovalRequest{ApprovalId: id, Approved: true}); status.Code(err) != code {
			t.Errorf("ResolveApproval(%q) = %v, want %v", id, err, code)
		}
	}
	h.l.Sync(context.Background())
	head, _ := h.l.Head()
	n := 0
	h.l.Range(0, head.Seq, func(e ledger.Entry) error {
		if strings.HasPrefix(e.Type, "approval.") {
			n++
		}
		return nil
	})
	if n != 0 || len(h.entries("(none)")) != before {
		t.Errorf("%d approval entries recorded", n)
	}
}

// TestApproval_PendingAtStopDenied: an engine stopping with an approval
// pending denies it (by "engine") and records that, and the call's
// verdict, before engine.stopped; the call never runs.
func TestApproval_PendingAtStopDenied(t *testing.T) {
	h := startHarness(t, "", "")
	h.propose("c1", "read_file", `{"path":"t3/a.md"}`)
	h.event("approval_requested")
	if _, err := h.client.Shutdown(h.ctx, &opxv1.ShutdownRequest{Reason: "test stops"}); err != nil {
		t.Fatal(err)
	}
	if r := h.result("c1"); !r.IsError || !strings.Contains(r.Content, "tier3:unanswered") {
		t.Errorf("result %v", r)
	}
	h.agent.CloseSend() // so the server's graceful stop need not wait for the agent
	if err := <-h.done; err != nil {
		t.Fatalf("engine Run: %v", err)
	}
	h.done <- nil // for stop
	got := story(h.entries("c1"))
	if !strings.Contains(got, "approval.requested approval.resolved:denied/engine shield.verdict:block/3/tier3:unanswered") ||
		!strings.HasSuffix(got, "engine.stopped") || strings.Contains(got, "exec.") {
		t.Errorf("ledger: %s", got)
	}
}

// TestApproval_OrphanDeniedAtStart: an approval left pending by an engine
// that crashed is denied (by "engine") when the next engine starts, so
// ListApprovals, which reads the approvals projection, does not offer
// an answer no one waits for.
func TestApproval_OrphanDeniedAtStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	l, err := ledger.Create(path, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(context.Background(), ledger.Sync,
		event.MustRecord("", &event.EngineStarted{Version: "old", PID: 1, Workspace: "/w", ConfigHash: strings.Repeat("0", 64),
			Policy: "p", PolicyHash: strings.Repeat("0", 64), Provider: "scripted", Model: "m"}),
		event.MustRecord("ses_old", &event.ToolProposed{MessageID: "m1", CallID: "c9", Tool: "read_file", Arguments: `{"path":"x"}`,
			ActionHash: strings.Repeat("0", 64)}),
		event.MustRecord("ses_old", &event.ShieldVerdict{CallID: "c9", Decision: event.Escalate, Tier: 0, Rule: "policy:human-reads",
			Reason: "asks a human", ActionHash: strings.Repeat("0", 64), PolicyHash: strings.Repeat("0", 64)}),
		event.MustRecord("ses_old", &event.ApprovalRequested{ApprovalID: "apr_orphan", MessageID: "m1", CallID: "c9", Tool: "read_file",
			Arguments: `{"path":"x"}`, Reason: "policy:human-reads", TimeoutMS: 60000})); err != nil {
		t.Fatal(err)
	}
	l.Close()
	h := startHarness(t, "", path)
	ls, err := h.client.ListApprovals(h.ctx, &opxv1.ListApprovalsRequest{})
	if err != nil || len(ls.Approvals) != 0 {
		t.Fatalf("ListApprovals = %v, %v", ls, err)
	}
	if _, err := h.client.ResolveApproval(h.ctx, &opxv1.ApprovalRequest{ApprovalId: "apr_orphan", Approved: true}); status.Code(err) != codes.NotFound {
		t.Errorf("answering the orphan: %v, want NotFound", err)
	}
	got := story(h.entries("c9"))
	if !strings.HasSuffix(got, "approval.requested approval.resolved:denied/engine") {
		t.Errorf("ledger: %s", got)
	}
}

// TestApproval_OldOrphansLeftAlone: an approval left pending by an engine
// before the last one (written by an older opx, which denied nothing at
// start) and one whose call was proposed again are not denied: the
// answer would be taken for another call. Neither is listed.
func TestApproval_OldOrphansLeftAlone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	l, err := ledger.Create(path, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	z := strings.Repeat("0", 64)
	started := event.MustRecord("", &event.EngineStarted{Version: "old", PID: 1, Workspace: "/w", ConfigHash: z, Policy: "p",
		PolicyHash: z, Provider: "scripted", Model: "m"})
	ask := func(call, id, args string) []ledger.Record {
		return []ledger.Record{
			event.MustRecord("ses_old", &event.ToolProposed{MessageID: "m1", CallID: call, Tool: "read_file", Arguments: args, ActionHash: z}),
			event.MustRecord("ses_old", &event.ShieldVerdict{CallID: call, Decision: event.Escalate, Tier: 0, Rule: "policy:human-reads",
				Reason: "asks a human", ActionHash: z, PolicyHash: z}),
			event.MustRecord("ses_old", &event.ApprovalRequested{ApprovalID: id, CallID: call, Tool: "read_file", Reason: "r", TimeoutMS: 60000}),
		}
	}
	recs := []ledger.Record{started}
	recs = append(recs, ask("c1", "apr_ancient", `{"path":"a"}`)...) // its engine crashed; the next denied nothing
	recs = append(recs, started)
	recs = append(recs, ask("c2", "apr_reused", `{"path":"b"}`)...)
	recs = append(recs, event.MustRecord("ses_old", &event.ToolProposed{MessageID: "m2", CallID: "c2", Tool: "read_file",
		Arguments: `{"path":"c"}`, ActionHash: z}), // the same call id again, then a crash
		event.MustRecord("ses_old", &event.ShieldVerdict{CallID: "c2", Decision: event.Allow, Tier: 0, Rule: "reads", Reason: "ok",
			ActionHash: z, PolicyHash: z}))
	if _, err := l.Append(context.Background(), ledger.Sync, recs...); err != nil {
		t.Fatal(err)
	}
	l.Close()
	h := startHarness(t, "", path) // verifies strictly when it stops
	if ls, err := h.client.ListApprovals(h.ctx, &opxv1.ListApprovalsRequest{}); err != nil || len(ls.Approvals) != 0 {
		t.Fatalf("ListApprovals = %v, %v", ls, err)
	}
	for _, call := range []string{"c1", "c2"} {
		if got := story(h.entries(call)); strings.Contains(got, "approval.resolved") {
			t.Errorf("%s: %s", call, got)
		}
	}
}

// TestApproval_ConflictingRules: with a verify rule and an allow rule both
// matching, the call waits for a human (verify beats allow: the trailing
// tier 1 allow does not answer the escalation); with a deny rule matching
// too, it is blocked at once and no one is asked.
func TestApproval_ConflictingRules(t *testing.T) {
	h := startHarness(t, "", "")
	if r := h.call("c1", "read_file", `{"path":"t3/secret/key.md"}`); !r.IsError || !strings.Contains(r.Content, "policy:no-secrets") {
		t.Fatalf("deny+verify+allow: %v", r)
	}
	if got := story(h.entries("c1")); got != "agent.tool_call tool.proposed shield.verdict:block/0/policy:no-secrets shield.verdict:allow/1/heuristics:none engine.tool_result" {
		t.Errorf("ledger: %s", got)
	}
	if r := h.call("c2", "read_file", `{"path":"README.md"}`); r.IsError {
		t.Fatalf("allow only: %v", r)
	}
	h.propose("c3", "read_file", `{"path":"t3/a.md"}`)
	_, d := h.event("approval_requested")
	if d["call_id"] != "c3" {
		t.Fatalf("approval for %v", d)
	}
	if got := story(h.entries("c3")); strings.Contains(got, "exec.") {
		t.Errorf("verify+allow ran before anyone answered: %s", got)
	}
	h.client.ResolveApproval(h.ctx, &opxv1.ApprovalRequest{ApprovalId: d["approval_id"].(string), Approved: true})
	h.result("c3")
}

// TestApproval_Tier2WithoutEvaluator: a tier 2 escalation with no tier 2
// evaluator configured goes to a human, and the verdict says why.
func TestApproval_Tier2WithoutEvaluator(t *testing.T) {
	h := startHarness(t, "", "")
	h.propose("c1", "read_file", `{"path":"t2/safe.md"}`)
	_, d := h.event("approval_requested")
	if !strings.Contains(d["reason"].(string), "no tier 2 evaluator is configured") {
		t.Errorf("reason %q", d["reason"])
	}
	h.client.ResolveApproval(h.ctx, &opxv1.ApprovalRequest{ApprovalId: d["approval_id"].(string), Approved: true})
	if r := h.result("c1"); r.IsError {
		t.Fatalf("result %v", r)
	}
	if got := story(h.entries("c1")); !strings.Contains(got, "shield.verdict:escalate/2/policy:model-reads shield.verdict:allow/1/heuristics:none shield.verdict:escalate/3/tier2:unconfigured approval.requested") {
		t.Errorf("ledger: %s", got)
	}
}
