package agent_test

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opx-dev/opx/agent"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// fakeEngine is an engine over real loopback gRPC whose model answers
// come from a script and whose directives the test sends.
type fakeEngine struct {
	opxv1.UnimplementedAgentServiceServer
	opxv1.UnimplementedLLMGatewayServer

	mu       sync.Mutex
	script   [][]*opxv1.LLMChunk // one entry per model call
	requests []*opxv1.LLMRequest
	events   chan *opxv1.AgentEvent
	send     chan *opxv1.EngineDirective
	reject   bool
}

func (f *fakeEngine) RunSession(s opxv1.AgentService_RunSessionServer) error {
	first, err := s.Recv()
	if err != nil {
		return err
	}
	f.events <- first
	if f.reject {
		return status.Error(codes.PermissionDenied, "wrong agent token")
	}
	go func() {
		for d := range f.send {
			if s.Send(d) != nil {
				return
			}
		}
	}()
	for {
		ev, err := s.Recv()
		if err != nil {
			return nil
		}
		f.events <- ev
	}
}

func (f *fakeEngine) Complete(req *opxv1.LLMRequest, s opxv1.LLMGateway_CompleteServer) error {
	f.mu.Lock()
	f.requests = append(f.requests, proto.Clone(req).(*opxv1.LLMRequest))
	if len(f.script) == 0 {
		f.mu.Unlock()
		return status.Error(codes.Unavailable, "model down")
	}
	chunks := f.script[0]
	f.script = f.script[1:]
	f.mu.Unlock()
	for _, c := range chunks {
		if err := s.Send(c); err != nil {
			return err
		}
	}
	return nil
}

func text(s string) *opxv1.LLMChunk { return &opxv1.LLMChunk{Chunk: &opxv1.LLMChunk_Text{Text: s}} }
func call(id, tool, args string) *opxv1.LLMChunk {
	return &opxv1.LLMChunk{Chunk: &opxv1.LLMChunk_ToolCall{ToolCall: &opxv1.ToolCall{CallId: id, ToolName: tool, ArgumentsJson: args}}}
}
func done(in, out int64) *opxv1.LLMChunk {
	return &opxv1.LLMChunk{Chunk: &opxv1.LLMChunk_Done{Done: &opxv1.LLMDone{FinishReason: "stop", Usage: &opxv1.TokenUsage{InputTokens: in, OutputTokens: out, TotalTokens: in + out}}}}
}

type harness struct {
	f    *fakeEngine
	errc chan error
}

func start(t *testing.T, f *fakeEngine) *harness {
	t.Helper()
	f.events = make(chan *opxv1.AgentEvent, 256)
	f.send = make(chan *opxv1.EngineDirective, 16)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	opxv1.RegisterAgentServiceServer(srv, f)
	opxv1.RegisterLLMGatewayServer(srv, f)
	go srv.Serve(lis)
	h := &harness{f: f, errc: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		h.errc <- agent.Run(ctx, agent.Config{Addr: lis.Addr().String(), Token: "tok", AgentID: "a1", CanaryJSON: []byte(`{"status":"sandboxed"}`)})
	}()
	t.Cleanup(func() { cancel(); srv.Stop() })
	return h
}

func (h *harness) next(t *testing.T) *opxv1.AgentEvent {
	t.Helper()
	select {
	case ev := <-h.f.events:
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event from the agent")
		return nil
	}
}

func process(id, content string) *opxv1.EngineDirective {
	return &opxv1.EngineDirective{Directive: &opxv1.EngineDirective_ProcessRequest{ProcessRequest: &opxv1.ProcessRequest{
		SessionId: "s1", MessageId: id, Content: content, Mode: "normal",
		Tools: []*opxv1.ToolDef{{Name: "read_file", Description: "read", InputSchema: []byte(`{}`), Group: "files"}}}}}
}

func result(id, content string, isErr bool) *opxv1.EngineDirective {
	return &opxv1.EngineDirective{Directive: &opxv1.EngineDirective_ToolResult{ToolResult: &opxv1.ToolResultDelivery{CallId: id, Content: content, IsError: isErr}}}
}

var shutdown = &opxv1.EngineDirective{Directive: &opxv1.EngineDirective_Shutdown{Shutdown: &opxv1.ShutdownDirective{Reason: "test"}}}

// conversation runs one scripted exchange with a tool call and returns
// every event the agent sent, marshalled deterministically.
func conversation(t *testing.T) ([][]byte, *fakeEngine) {
	f := &fakeEngine{script: [][]*opxv1.LLMChunk{
		{text("Let me look. "), call("c1", "read_file", `{"path":"README.md"}`), done(10, 5)},
		{text("The README "), text("says hi."), done(20, 4)},
	}}
	h := start(t, f)
	var out [][]byte
	rec := func(ev *opxv1.AgentEvent) *opxv1.AgentEvent {
		b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(ev)
		out = append(out, b)
		return ev
	}
	ready := rec(h.next(t)).GetAgentReady()
	if ready == nil || ready.Token != "tok" || ready.AgentId != "a1" || ready.SandboxCanaryJson != `{"status":"sandboxed"}` {
		t.Fatalf("first event %v, want AgentReady", ready)
	}
	f.send <- process("m1", "what does the README say?")
	if tok := rec(h.next(t)).GetLlmToken(); tok == nil || tok.Token != "Let me look. " || tok.MessageId != "m1" {
		t.Fatalf("want the first token, got %v", tok)
	}
	tc := rec(h.next(t)).GetToolCall()
	if tc == nil || tc.CallId != "c1" || tc.ToolName != "read_file" || tc.ArgumentsJson != `{"path":"README.md"}` || tc.MessageId != "m1" {
		t.Fatalf("want the tool call, got %v", tc)
	}
	f.send <- result("c1", "hi", false)
	var answer strings.Builder
	var rc *opxv1.AgentResponseComplete
	for rc == nil {
		ev := rec(h.next(t))
		if tok := ev.GetLlmToken(); tok != nil {
			answer.WriteString(tok.Token)
		}
		rc = ev.GetResponseComplete()
	}
	if rc.Content != "The README says hi." || answer.String() != rc.Content || rc.MessageId != "m1" {
		t.Errorf("answer %q, streamed %q", rc.Content, answer.String())
	}
	if u := rc.TokenUsage; u.InputTokens != 30 || u.OutputTokens != 9 || u.TotalTokens != 39 {
		t.Errorf("usage %v, want the sum of both calls", u)
	}
	if len(rc.Thoughts) != 1 || rc.Thoughts[0].Stage != "tool_call" || !strings.Contains(rc.Thoughts[0].Summary, "read_file") {
		t.Errorf("thoughts %v", rc.Thoughts)
	}
	// The second model call carries the tool result.
	f.mu.Lock()
	reqs := f.requests
	f.mu.Unlock()
	if len(reqs) != 2 {
		t.Fatalf("%d model calls, want 2", len(reqs))
	}
	m := reqs[1].Messages
	last := m[len(m)-1]
	if m[0].Role != "system" || last.Role != "tool" || last.ToolCallId != "c1" || last.Content != "hi" || m[len(m)-2].ToolCalls[0].CallId != "c1" {
		t.Errorf("second request messages %v", m)
	}
	for _, r := range reqs {
		b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(r)
		out = append(out, b)
	}
	f.send <- shutdown
	if err := <-h.errc; err != nil {
		t.Errorf("Run after shutdown = %v, want nil", err)
	}
	return out, f
}

func TestAgent_Conversation(t *testing.T) { conversation(t) }

// TestAgent_Deterministic runs the same exchange twice: the agent's events
// and model requests are byte-identical.
func TestAgent_Deterministic(t *testing.T) {
	a, _ := conversation(t)
	b, _ := conversation(t)
	if len(a) != len(b) {
		t.Fatalf("%d vs %d messages", len(a), len(b))
	}
	for i := range a {
		if string(a[i]) != string(b[i]) {
			t.Errorf("message %d differs between runs", i)
		}
	}
}

func TestAgent_ModelFailureThenNextMessage(t *testing.T) {
	f := &fakeEngine{}
	h := start(t, f)
	h.next(t) // ready
	f.send <- process("m1", "hello")
	e := h.next(t).GetError()
	if e == nil || e.Code != "llm_error" || e.MessageId != "m1" {
		t.Fatalf("want llm_error for m1, got %v", e)
	}
	f.mu.Lock()
	f.script = [][]*opxv1.LLMChunk{{text("ok"), done(1, 1)}}
	f.mu.Unlock()
	f.send <- process("m2", "again")
	h.next(t) // token
	if rc := h.next(t).GetResponseComplete(); rc == nil || rc.Content != "ok" {
		t.Fatalf("the next message was not answered: %v", rc)
	}
}

func TestAgent_TruncatedModelAnswer(t *testing.T) {
	f := &fakeEngine{script: [][]*opxv1.LLMChunk{{text("par")}}} // no done
	h := start(t, f)
	h.next(t)
	f.send <- process("m1", "hello")
	h.next(t) // the token that did arrive
	if e := h.next(t).GetError(); e == nil || e.Code != "llm_error" || !strings.Contains(e.Message, "before it was complete") {
		t.Fatalf("got %v", e)
	}
}

func TestAgent_LoadTools(t *testing.T) {
	f := &fakeEngine{script: [][]*opxv1.LLMChunk{
		{call("c1", "load_tools", `{"groups":["git"]}`), done(1, 1)},
		{text("done"), done(1, 1)},
	}}
	h := start(t, f)
	h.next(t)
	f.send <- process("m1", "use git")
	req := h.next(t).GetToolDefsRequest()
	if req == nil || req.CallId != "c1" || len(req.Groups) != 1 || req.Groups[0] != "git" {
		t.Fatalf("want a tool defs request, got %v", req)
	}
	f.send <- &opxv1.EngineDirective{Directive: &opxv1.EngineDirective_ToolDefs{ToolDefs: &opxv1.ToolDefsDelivery{CallId: "c1",
		Tools: []*opxv1.ToolDef{{Name: "git_status", Group: "git"}}}}}
	h.next(t) // token
	if rc := h.next(t).GetResponseComplete(); rc == nil {
		t.Fatal("no answer")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	names := []string{}
	for _, td := range f.requests[1].Tools {
		names = append(names, td.Name)
	}
	if strings.Join(names, ",") != "read_file,load_tools,git_status" {
		t.Errorf("tools of the next call %v", names)
	}
}

func TestAgent_MaxRounds(t *testing.T) {
	var script [][]*opxv1.LLMChunk
	for i := 0; i < 30; i++ {
		script = append(script, []*opxv1.LLMChunk{call("c"+string(rune('a'+i)), "read_file", `{}`), done(1, 1)})
	}
	f := &fakeEngine{script: script}
	h := start(t, f)
	h.next(t)
	f.send <- process("m1", "loop")
	for {
		ev := h.next(t)
		if tc := ev.GetToolCall(); tc != nil {
			f.send <- result(tc.CallId, "again", false)
			continue
		}
		if e := ev.GetError(); e != nil {
			if e.Code != "max_rounds" {
				t.Fatalf("error %v", e)
			}
			return
		}
	}
}

func TestAgent_UnknownCallResult(t *testing.T) {
	f := &fakeEngine{}
	h := start(t, f)
	h.next(t)
	f.send <- result("nobody", "x", false)
	if e := h.next(t).GetError(); e == nil || e.Code != "unknown_call" {
		t.Fatalf("got %v", e)
	}
}

func TestAgent_RejectedToken(t *testing.T) {
	f := &fakeEngine{reject: true}
	h := start(t, f)
	h.next(t)
	select {
	case err := <-h.errc:
		if status.Code(err) != codes.PermissionDenied {
			t.Errorf("Run = %v, want PermissionDenied", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return")
	}
}
