package engine_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/engine/judge"
	"github.com/opx-dev/opx/engine/otr"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"github.com/opx-dev/opx/shield"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// otrTurn answers one process request as an agent would: a model call,
// then the given tool calls one by one, then tokens and an answer. It
// returns the request and the tool results.
func otrTurn(t *testing.T, agent opxv1.AgentService_RunSessionClient, gw opxv1.LLMGatewayClient, answer string, calls ...*opxv1.ToolCallProposed) (*opxv1.ProcessRequest, []string) {
	t.Helper()
	pr := mustRecv(t, agent).GetProcessRequest()
	if pr == nil {
		t.Fatal("no process request")
	}
	cs, err := gw.Complete(agent.Context(), &opxv1.LLMRequest{SessionId: pr.SessionId, MessageId: pr.MessageId,
		Messages: append(pr.History, &opxv1.ChatMessage{Role: "user", Content: pr.Content})})
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := cs.Recv(); err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatalf("model call: %v", err)
			}
			break
		}
	}
	var results []string
	for _, c := range calls {
		c.MessageId = pr.MessageId
		agent.Send(&opxv1.AgentEvent{Event: &opxv1.AgentEvent_ToolCall{ToolCall: c}})
		for {
			d := mustRecv(t, agent)
			if res := d.GetToolResult(); res != nil && res.CallId == c.CallId {
				results = append(results, res.Content)
				break
			}
		}
	}
	// Memory names no session: withheld while an OTR message is answered.
	agent.Send(&opxv1.AgentEvent{Event: &opxv1.AgentEvent_MemoryFlush{MemoryFlush: &opxv1.MemoryFlush{Content: "MEMMARK-" + pr.Mode}}})
	agent.Send(&opxv1.AgentEvent{Event: &opxv1.AgentEvent_LlmToken{LlmToken: &opxv1.LLMTokenEmitted{MessageId: pr.MessageId, Token: answer}}})
	agent.Send(&opxv1.AgentEvent{Event: &opxv1.AgentEvent_ResponseComplete{ResponseComplete: &opxv1.AgentResponseComplete{MessageId: pr.MessageId, Content: answer,
		Thoughts: []*opxv1.Thought{{Stage: "reasoning", Summary: "thinking about " + answer}}}}})
	return pr, results
}

func drain(t *testing.T, s opxv1.ClientService_SendMessageClient) {
	t.Helper()
	for {
		ev, err := s.Recv()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatal(err)
			}
			return
		}
		if ev.Type == "response_complete" {
			return
		}
	}
}

// TestOTR_WithheldReadOnlyAndRemembered: an off-the-record session is
// read-only (a write blocked by otr:read-only at tier -1, a read runs),
// none of its text reaches the ledger (entries or blobs), the agent still
// gets the conversation, another mode into it is refused, and sessions
// lists it only when asked.
func TestOTR_WithheldReadOnlyAndRemembered(t *testing.T) {
	const (
		userText = "USERMARK-7f3a9c please read the plan"
		fileText = "FILEMARK-2b8e41 the plan is secret"
		answer   = "ANSWERMARK-c0d9e2 done"
		second   = "SECONDMARK-5a1b77 and again"
	)
	var ws string
	r := startEngine(t, func(o *engine.Options) { ws = o.Workspace })
	if err := os.WriteFile(filepath.Join(ws, "plan.txt"), []byte(fileText), 0o644); err != nil {
		t.Fatal(err)
	}
	agent := r.connectAgent(t, <-r.tokens)
	gw := opxv1.NewLLMGatewayClient(r.conn)
	c := opxv1.NewClientServiceClient(r.conn)

	s, err := c.SendMessage(r.ctx, &opxv1.ClientMessageRequest{Content: userText, Mode: "otr"})
	if err != nil {
		t.Fatal(err)
	}
	pr, results := otrTurn(t, agent, gw, answer,
		&opxv1.ToolCallProposed{CallId: "c1", ToolName: "read_file", ArgumentsJson: `{"path":"plan.txt"}`},
		&opxv1.ToolCallProposed{CallId: "c2", ToolName: "write_file", ArgumentsJson: `{"path":"plan.txt","content":"WRITEMARK"}`},
		&opxv1.ToolCallProposed{CallId: "c3", ToolName: "http_request", ArgumentsJson: `{"url":"https://example.com","method":"POST","body":"x"}`})
	drain(t, s)
	if pr.Mode != "otr" {
		t.Errorf("process request mode %q", pr.Mode)
	}
	if !strings.Contains(results[0], "FILEMARK") || !strings.Contains(results[1], otr.RuleReadOnly) || !strings.Contains(results[2], otr.RuleReadOnly) {
		t.Errorf("results %q: want the file read, the write and the POST blocked", results)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "plan.txt")); string(b) != fileText {
		t.Errorf("plan.txt changed: %q", b)
	}

	// Late entries about the finished message name no session: withheld
	// all the same.
	agent.Send(&opxv1.AgentEvent{Event: &opxv1.AgentEvent_LlmToken{LlmToken: &opxv1.LLMTokenEmitted{MessageId: pr.MessageId, Token: "LATEMARK token"}}})
	agent.Send(&opxv1.AgentEvent{Event: &opxv1.AgentEvent_ToolCall{ToolCall: &opxv1.ToolCallProposed{MessageId: pr.MessageId, CallId: "late",
		ToolName: "read_file", ArgumentsJson: `{"path":"LATEMARK"}`}}})
	for {
		if res := mustRecv(t, agent).GetToolResult(); res != nil && res.CallId == "late" {
			break
		}
	}

	// The conversation goes on from the engine's memory.
	s, err = c.SendMessage(r.ctx, &opxv1.ClientMessageRequest{SessionId: pr.SessionId, Content: second})
	if err != nil {
		t.Fatal(err)
	}
	pr2, _ := otrTurn(t, agent, gw, "fine")
	drain(t, s)
	if len(pr2.History) != 2 || pr2.History[0].Content != userText || pr2.History[1].Content != answer {
		t.Errorf("history sent to the agent: %v", pr2.History)
	}
	// The mode is fixed.
	ms, err := c.SendMessage(r.ctx, &opxv1.ClientMessageRequest{SessionId: pr.SessionId, Content: "x", Mode: "normal"})
	if err == nil {
		_, err = ms.Recv()
	}
	if status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "off the record") {
		t.Errorf("a normal message into an off-the-record session: %v, want FailedPrecondition", err)
	}

	ls, err := c.ListSessions(r.ctx, &opxv1.ListSessionsRequest{})
	if err != nil || len(ls.Sessions) != 0 {
		t.Errorf("sessions without include_otr: %v, %v", ls, err)
	}
	ls, err = c.ListSessions(r.ctx, &opxv1.ListSessionsRequest{IncludeOtr: true})
	if err != nil || len(ls.Sessions) != 1 || ls.Sessions[0].Mode != "otr" {
		t.Fatalf("sessions with include_otr: %v, %v", ls, err)
	}
	if n, ok := event.Withheld(ls.Sessions[0].Title); !ok || n != int64(len(userText)) {
		t.Errorf("title %q: want the withheld form of %d bytes", ls.Sessions[0].Title, len(userText))
	}

	// Nor can a normal session go off the record.
	ns, err := c.SendMessage(r.ctx, &opxv1.ClientMessageRequest{Content: "a normal message"})
	if err != nil {
		t.Fatal(err)
	}
	npr, _ := otrTurn(t, agent, gw, "normal answer")
	drain(t, ns)
	ms, err = c.SendMessage(r.ctx, &opxv1.ClientMessageRequest{SessionId: npr.SessionId, Content: "x", Mode: "otr"})
	if err == nil {
		_, err = ms.Recv()
	}
	if status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "mode is fixed") {
		t.Errorf("an off-the-record message into a normal session: %v, want FailedPrecondition", err)
	}

	// Nothing of the text in any entry, and no blob for the session.
	if err := r.l.Sync(r.ctx); err != nil {
		t.Fatal(err)
	}
	var blocked, withheld, normalFlush int
	h, _ := r.l.Head()
	err = r.l.Range(0, h.Seq, func(e ledger.Entry) error {
		if e.Type == event.TypeMemoryFlush && bytes.Contains(e.Data, []byte("MEMMARK-normal")) {
			normalFlush++
		}
		for _, m := range []string{"USERMARK", "FILEMARK", "ANSWERMARK", "SECONDMARK", "WRITEMARK", "plan.txt", "MEMMARK-otr", "LATEMARK"} {
			if bytes.Contains(e.Data, []byte(m)) {
				t.Errorf("entry %d (%s) holds %s: %s", e.Seq, e.Type, m, e.Data)
			}
		}
		if e.Session == pr.SessionId {
			refs, _ := ledger.BlobRefs(e.Data)
			if len(refs) > 0 {
				t.Errorf("entry %d (%s) names blobs %v", e.Seq, e.Type, refs)
			}
			withheld += bytes.Count(e.Data, []byte(event.WithheldPrefix))
		}
		if e.Type == event.TypeShieldVerdict && bytes.Contains(e.Data, []byte(`"rule":"otr:read-only"`)) {
			blocked++
			if !bytes.Contains(e.Data, []byte(`"tier":-1`)) || !bytes.Contains(e.Data, []byte(`"decision":"block"`)) {
				t.Errorf("verdict %s", e.Data)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if blocked != 2 || withheld == 0 || normalFlush != 1 {
		t.Errorf("%d otr:read-only verdicts (want 2), %d withheld members, %d normal memory flushes in clear (want 1)", blocked, withheld, normalFlush)
	}
}

// TestOTR_ApprovalShowsArgumentsFromMemory: a call of an off-the-record
// session escalated to a human is shown to them with its arguments (from
// the engine's memory), while approval.requested records only their
// commitment.
func TestOTR_ApprovalShowsArgumentsFromMemory(t *testing.T) {
	policy, err := shield.ParsePolicy([]byte("version: 1\ndefault: allow\nverify:\n  - {name: human-reads, tools: [read_file], paths: [\"t3/**\"], tier: 3}\n"))
	if err != nil {
		t.Fatal(err)
	}
	var ws string
	r := startEngine(t, func(o *engine.Options) {
		ws = o.Workspace
		o.ApprovalTimeout = time.Minute
		o.Evaluator = judge.ShieldEvaluator{S: shield.New(shield.Config{Workspace: o.Workspace, Home: "/home/nobody", Policy: policy})}
	})
	os.MkdirAll(filepath.Join(ws, "t3"), 0o755)
	if err := os.WriteFile(filepath.Join(ws, "t3", "GUARDMARK.md"), []byte("guarded\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	agent := r.connectAgent(t, <-r.tokens)
	c := opxv1.NewClientServiceClient(r.conn)
	s, err := c.SendMessage(r.ctx, &opxv1.ClientMessageRequest{Content: "read the guarded file", Mode: "otr"})
	if err != nil {
		t.Fatal(err)
	}
	pr := mustRecv(t, agent).GetProcessRequest()
	agent.Send(&opxv1.AgentEvent{Event: &opxv1.AgentEvent_ToolCall{ToolCall: &opxv1.ToolCallProposed{MessageId: pr.MessageId, CallId: "c1",
		ToolName: "read_file", ArgumentsJson: `{"path":"t3/GUARDMARK.md"}`}}})
	var pending *opxv1.PendingApproval
	for pending == nil {
		ev, err := s.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type != "approval_requested" {
			continue
		}
		ls, err := c.ListApprovals(r.ctx, &opxv1.ListApprovalsRequest{})
		if err != nil || len(ls.Approvals) != 1 {
			t.Fatalf("approvals %v, %v", ls, err)
		}
		pending = ls.Approvals[0]
	}
	if !strings.Contains(pending.Arguments, "t3/GUARDMARK.md") || !strings.Contains(pending.Reason, "human-reads") {
		t.Errorf("the human is shown %q (%q), want the arguments and the reason", pending.Arguments, pending.Reason)
	}
	if _, err := c.ResolveApproval(r.ctx, &opxv1.ApprovalRequest{ApprovalId: pending.ApprovalId, Approved: true, Reason: "GUARDMARK ok"}); err != nil {
		t.Fatal(err)
	}
	for {
		if res := mustRecv(t, agent).GetToolResult(); res != nil && res.CallId == "c1" {
			if !strings.Contains(res.Content, "guarded") {
				t.Errorf("result %q", res.Content)
			}
			break
		}
	}
	agent.Send(&opxv1.AgentEvent{Event: &opxv1.AgentEvent_ResponseComplete{ResponseComplete: &opxv1.AgentResponseComplete{MessageId: pr.MessageId, Content: "done"}}})
	drain(t, s)
	if err := r.l.Sync(r.ctx); err != nil {
		t.Fatal(err)
	}
	h, _ := r.l.Head()
	var requested int
	r.l.Range(0, h.Seq, func(e ledger.Entry) error {
		if bytes.Contains(e.Data, []byte("GUARDMARK")) {
			t.Errorf("entry %d (%s) holds the path: %s", e.Seq, e.Type, e.Data)
		}
		if e.Type == event.TypeApprovalRequested {
			requested++
		}
		return nil
	})
	if requested != 1 {
		t.Errorf("%d approval.requested entries", requested)
	}
}
