package engine_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/engine/grpcapi"
	"github.com/opx-dev/opx/engine/llm"
	"github.com/opx-dev/opx/fixtures"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/ledgertest"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

const clientToken = "0123456789abcdef0123456789abcdef"

// allowAll is a policy that allows what the heuristics do not block.
const allowAll = "version: 1\ndefault: allow\n"

// running is an engine served over real gRPC on loopback, with a
// placeholder agent process (sleep) whose token the test uses to connect
// its own scripted agent.
type running struct {
	conn   *grpc.ClientConn
	l      *ledger.Ledger
	tokens chan string
	ctx    context.Context // with the client token
	done   chan error
	e      *engine.Engine
	// agentCtx carries the token of the agent last connected.
	agentCtx context.Context
}

// agentCtx returns a context that carries an agent token.
func agentCtx(token string) context.Context {
	return metadata.AppendToOutgoingContext(context.Background(), opxv1.AgentTokenHeader, token)
}

func startEngine(t testing.TB, tune ...func(*engine.Options)) *running {
	t.Helper()
	return startEngineWith(t, ledger.Options{}, tune...)
}

// startEngineWith is startEngine on a ledger created with lopts.
func startEngineWith(t testing.TB, lopts ledger.Options, tune ...func(*engine.Options)) *running {
	t.Helper()
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "README.md"), []byte("# demo\nhello from the workspace\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "ledger.db")
	l, err := ledger.Create(path, lopts)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := llm.ParseTranscript(fixtures.DefaultTranscript)
	if err != nil {
		t.Fatal(err)
	}
	r := &running{l: l, tokens: make(chan string, 8), done: make(chan error, 1)}
	pr, pw := io.Pipe()
	opts := engine.Options{Services: grpcapi.Register, Workspace: ws, Ledger: l, Provider: llm.NewScripted(tr), ClientToken: clientToken,
		Version: "test", Policy: "read-only", Stdout: pw, Logf: t.Logf,
		SpawnAgent: func(ctx context.Context, launch engine.AgentLaunch) (*exec.Cmd, error) {
			token := launch.Token
			cmd := exec.Command("sleep", "60")
			err := cmd.Start()
			// The engine records agent.spawned when this returns; a
			// real agent takes longer than that to connect.
			go func() { time.Sleep(20 * time.Millisecond); r.tokens <- token }()
			return cmd, err
		}}
	for _, f := range tune {
		f(&opts)
	}
	e, err := engine.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	r.e = e
	ctx, cancel := context.WithCancel(context.Background())
	go func() { r.done <- e.Run(ctx) }()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "PORT:") {
		t.Fatalf("start-up line %q, %v", line, err)
	}
	go io.Copy(io.Discard, pr)
	r.conn, err = grpc.NewClient("127.0.0.1:"+strings.TrimSpace(strings.TrimPrefix(line, "PORT:")), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	r.ctx = metadata.AppendToOutgoingContext(context.Background(), engine.TokenHeader, clientToken)
	t.Cleanup(func() {
		cancel()
		if err := <-r.done; err != nil {
			t.Errorf("engine Run: %v", err)
		}
		r.conn.Close()
		if err := l.Close(); err != nil {
			t.Error(err)
		}
		ledgertest.MustVerify(t, path, event.StrictOptions())
	})
	return r
}

const unavailableCanary = `{"verified":false,"status":"unavailable","platform":"linux","mechanism":"none","probes":[],"summary":"test agent","timestamp":"2026-11-22T10:00:00Z"}`

// connectAgent opens the agent stream with token and sends AgentReady.
func (r *running) connectAgent(t testing.TB, token string) opxv1.AgentService_RunSessionClient {
	t.Helper()
	r.agentCtx = agentCtx(token)
	s, err := opxv1.NewAgentServiceClient(r.conn).RunSession(r.agentCtx)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Send(&opxv1.AgentEvent{Event: &opxv1.AgentEvent_AgentReady{AgentReady: &opxv1.AgentReady{
		AgentId: "test-agent", Token: token, SandboxCanaryJson: unavailableCanary}}}); err != nil {
		t.Fatal(err)
	}
	return s
}

// types returns the types of all committed entries.
func (r *running) types(t testing.TB) []string {
	t.Helper()
	if err := r.l.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	h, _ := r.l.Head()
	var out []string
	r.l.Range(0, h.Seq, func(e ledger.Entry) error { out = append(out, e.Type); return nil })
	return out
}

// TestEngine_WrongAgentTokenRejectedAndRecorded: an agent stream that
// passes the interceptor (the token in its metadata) but presents another
// token in AgentReady is refused by the stream's own check, on record.
func TestEngine_WrongAgentTokenRejectedAndRecorded(t *testing.T) {
	r := startEngine(t)
	s, err := opxv1.NewAgentServiceClient(r.conn).RunSession(agentCtx(<-r.tokens))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Send(&opxv1.AgentEvent{Event: &opxv1.AgentEvent_AgentReady{AgentReady: &opxv1.AgentReady{
		AgentId: "test-agent", Token: "not-the-token", SandboxCanaryJson: unavailableCanary}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Recv(); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("Recv = %v, want PermissionDenied", err)
	}
	got := strings.Join(r.types(t), " ")
	if !strings.Contains(got, "agent.ready") {
		t.Errorf("entries %s: want the refused agent.ready on record", got)
	}
	h, _ := r.l.Head()
	e, _ := r.l.Get(h.Seq)
	var ready event.AgentReady
	json.Unmarshal(e.Data, &ready)
	if e.Type != event.TypeAgentReady || ready.TokenValid {
		t.Errorf("last entry %s %s, want agent.ready with token_valid false", e.Type, e.Data)
	}
}

func TestEngine_ClientTokenRequired(t *testing.T) {
	r := startEngine(t)
	c := opxv1.NewClientServiceClient(r.conn)
	for name, ctx := range map[string]context.Context{
		"missing": context.Background(),
		"wrong":   metadata.AppendToOutgoingContext(context.Background(), engine.TokenHeader, "wrong"),
	} {
		if _, err := c.GetStatus(ctx, &opxv1.StatusRequest{}); status.Code(err) != codes.Unauthenticated {
			t.Errorf("%s token: GetStatus = %v, want Unauthenticated", name, err)
		}
		if _, err := opxv1.NewLedgerServiceClient(r.conn).Head(ctx, &opxv1.HeadRequest{}); status.Code(err) != codes.Unauthenticated {
			t.Errorf("%s token: Head = %v, want Unauthenticated", name, err)
		}
	}
	st, err := c.GetStatus(r.ctx, &opxv1.StatusRequest{})
	if err != nil || st.EnginePid != int64(os.Getpid()) {
		t.Errorf("GetStatus = %v, %v", st, err)
	}
	// Four refusals within a second: the first is recorded, the others
	// are counted in the next entry rather than flooding the ledger.
	if got := strings.Count(strings.Join(r.types(t), " "), "client.rejected"); got != 1 {
		t.Errorf("%d client.rejected entries, want 1", got)
	}
}

func TestEngine_BadMessagesRefused(t *testing.T) {
	r := startEngine(t)
	c := opxv1.NewClientServiceClient(r.conn)
	for name, req := range map[string]*opxv1.ClientMessageRequest{
		"empty":     {Content: "  "},
		"oversized": {Content: strings.Repeat("x", engine.MaxMessageBytes+1)},
		"bad mode":  {Content: "hi", Mode: "turbo"},
	} {
		s, err := c.SendMessage(r.ctx, &opxv1.ClientMessageRequest{Content: req.Content, Mode: req.Mode})
		if err == nil {
			_, err = s.Recv()
		}
		if status.Code(err) != codes.InvalidArgument {
			t.Errorf("%s: %v, want InvalidArgument", name, err)
		}
	}
	<-r.tokens // the agent was spawned (agent.spawned may come after the messages)
	for _, typ := range r.types(t) {
		switch typ {
		case event.TypeGenesis, event.TypeEngineStarted, event.TypeCheckpoint, event.TypeAgentSpawned:
		default:
			t.Fatalf("bad messages were recorded: %v", r.types(t))
		}
	}
}

// TestEngine_Conversation drives one message through the engine with a
// scripted agent: the model (default transcript) reads README.md through a
// tool call, Shield's read-only policy allows it, the executor reads the
// file, and the answer streams to the client.
func TestEngine_Conversation(t *testing.T) {
	r := startEngine(t)
	token := <-r.tokens
	agent := r.connectAgent(t, token)
	gw := opxv1.NewLLMGatewayClient(r.conn)

	// The scripted agent, in the test's goroutine after the client sends.
	agentErr := make(chan error, 1)
	go func() { agentErr <- runScriptedAgent(agent, gw) }()

	// A gateway call for a message nobody sent is refused.
	if s, err := gw.Complete(r.agentCtx, &opxv1.LLMRequest{SessionId: "x", MessageId: "forged"}); err == nil {
		if _, err := s.Recv(); status.Code(err) != codes.PermissionDenied {
			t.Errorf("forged gateway call: %v, want PermissionDenied", err)
		}
	}

	c := opxv1.NewClientServiceClient(r.conn)
	s, err := c.SendMessage(r.ctx, &opxv1.ClientMessageRequest{Content: "please read README.md"})
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	var answer strings.Builder
	session := ""
	for {
		ev, err := s.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		session = ev.SessionId
		if len(types) == 0 || types[len(types)-1] != ev.Type {
			types = append(types, ev.Type)
		}
		if ev.Type == "token" {
			var d map[string]string
			json.Unmarshal(ev.Data, &d)
			answer.WriteString(d["text"])
		}
	}
	want := "session_created message tool_call verdict tool_result token response_complete"
	if strings.Join(types, " ") != want {
		t.Errorf("events %v, want %s", types, want)
	}
	if !strings.Contains(answer.String(), "hello from the workspace") {
		t.Errorf("answer %q does not quote README.md", answer.String())
	}
	h, err := c.GetHistory(r.ctx, &opxv1.GetHistoryRequest{SessionId: session})
	if err != nil || len(h.Messages) != 2 || h.Messages[0].Role != "user" || h.Messages[1].Role != "assistant" {
		t.Errorf("history %v, %v", h, err)
	}
	ls, err := c.ListSessions(r.ctx, &opxv1.ListSessionsRequest{})
	if err != nil || len(ls.Sessions) != 1 || ls.Sessions[0].Id != session || ls.Sessions[0].Title != "please read README.md" {
		t.Errorf("sessions %v, %v", ls, err)
	}
	got := strings.Join(r.types(t), " ")
	for _, w := range []string{
		// The second model call streams its tokens to the agent while the
		// gateway still reads the response, so agent.tokens and
		// llm.response may interleave; the answer comes last.
		"agent.spawned sandbox.canary agent.ready session.created client.message engine.process_request llm.request llm.response agent.tool_call tool.proposed shield.verdict exec.started exec.completed engine.tool_result llm.request ",
	} {
		if !strings.Contains(got, w) {
			t.Errorf("ledger:\n%s\nwant the sequence:\n%s", got, w)
		}
	}
	if !strings.HasSuffix(got, "llm.response agent.tokens agent.response_complete") && !strings.HasSuffix(got, "agent.tokens llm.response agent.response_complete") {
		t.Errorf("ledger ends %q, want the response, its tokens and the answer", got[max(0, len(got)-80):])
	}
	agent.CloseSend()
	<-agentErr
}

// runScriptedAgent answers process requests the way the real agent does:
// model call through the gateway, tool calls proposed and awaited, tokens
// streamed, a final response.
func runScriptedAgent(s opxv1.AgentService_RunSessionClient, gw opxv1.LLMGatewayClient) error {
	for {
		d, err := s.Recv()
		if err != nil {
			return err
		}
		pr := d.GetProcessRequest()
		if pr == nil {
			continue
		}
		msgs := append(pr.History, &opxv1.ChatMessage{Role: "user", Content: pr.Content})
		for round := 0; round < 5; round++ {
			// The agent stream's context carries the agent token.
			cs, err := gw.Complete(s.Context(), &opxv1.LLMRequest{SessionId: pr.SessionId, MessageId: pr.MessageId, Messages: msgs, Tools: pr.Tools})
			if err != nil {
				return err
			}
			var text strings.Builder
			var calls []*opxv1.ToolCall
			for {
				ch, err := cs.Recv()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					return err
				}
				if tx := ch.GetText(); tx != "" {
					text.WriteString(tx)
					s.Send(&opxv1.AgentEvent{Event: &opxv1.AgentEvent_LlmToken{LlmToken: &opxv1.LLMTokenEmitted{MessageId: pr.MessageId, Token: tx}}})
				}
				if tc := ch.GetToolCall(); tc != nil {
					calls = append(calls, tc)
				}
			}
			if len(calls) == 0 {
				s.Send(&opxv1.AgentEvent{Event: &opxv1.AgentEvent_ResponseComplete{ResponseComplete: &opxv1.AgentResponseComplete{MessageId: pr.MessageId, Content: text.String()}}})
				break
			}
			msgs = append(msgs, &opxv1.ChatMessage{Role: "assistant", Content: text.String(), ToolCalls: calls})
			for _, tc := range calls {
				s.Send(&opxv1.AgentEvent{Event: &opxv1.AgentEvent_ToolCall{ToolCall: &opxv1.ToolCallProposed{CallId: tc.CallId, ToolName: tc.ToolName, ArgumentsJson: tc.ArgumentsJson, MessageId: pr.MessageId}}})
				for {
					d, err := s.Recv()
					if err != nil {
						return err
					}
					if res := d.GetToolResult(); res != nil && res.CallId == tc.CallId {
						msgs = append(msgs, &opxv1.ChatMessage{Role: "tool", Content: res.Content, ToolCallId: tc.CallId})
						break
					}
				}
			}
		}
	}
}

// TestEngine_ModelFailureRecorded: a provider that keeps failing is
// retried, the failure is recorded with its status and attempts, and the
// client hears about it.
func TestEngine_ModelFailureRecorded(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":{"message":"overloaded"}}`, http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	p, err := llm.NewOpenAI(llm.OpenAIConfig{BaseURL: srv.URL, Model: "gpt-test"})
	if err != nil {
		t.Fatal(err)
	}
	r := startEngine(t, func(o *engine.Options) {
		o.Provider = p
		o.Retry = llm.RetryPolicy{MaxAttempts: 2, Sleep: func(context.Context, time.Duration) error { return nil }}
	})
	agent := r.connectAgent(t, <-r.tokens)
	c := opxv1.NewClientServiceClient(r.conn)
	s, err := c.SendMessage(r.ctx, &opxv1.ClientMessageRequest{Content: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	d, err := agent.Recv()
	if err != nil {
		t.Fatal(err)
	}
	pr := d.GetProcessRequest()
	cs, err := opxv1.NewLLMGatewayClient(r.conn).Complete(r.agentCtx, &opxv1.LLMRequest{SessionId: pr.SessionId, MessageId: pr.MessageId,
		Messages: []*opxv1.ChatMessage{{Role: "user", Content: "hello"}}})
	if err == nil {
		_, err = cs.Recv()
	}
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("gateway = %v, want Unavailable", err)
	}
	agent.Send(&opxv1.AgentEvent{Event: &opxv1.AgentEvent_Error{Error: &opxv1.AgentError{Code: "llm_error", Message: err.Error(), MessageId: pr.MessageId}}})
	var last *opxv1.PipelineEvent
	for {
		ev, err := s.Recv()
		if err != nil {
			break
		}
		last = ev
	}
	if last == nil || last.Type != "error" {
		t.Errorf("client's last event %v, want the error", last)
	}
	r.l.Sync(context.Background())
	h, _ := r.l.Head()
	var resp *event.LLMResponse
	r.l.Range(0, h.Seq, func(e ledger.Entry) error {
		if e.Type == event.TypeLLMResponse {
			p, _ := event.Decode(e)
			resp = p.(*event.LLMResponse)
		}
		return nil
	})
	if resp == nil || resp.Status != 503 || resp.Attempts != 2 || resp.Error == "" || resp.Provider != "openai" {
		t.Errorf("recorded response %+v", resp)
	}
}

// TestEngine_MalformedAgentEvents: hostile or broken events from the agent
// are answered with errors and recorded, and change nothing else.
func TestEngine_MalformedAgentEvents(t *testing.T) {
	r := startEngine(t)
	agent := r.connectAgent(t, <-r.tokens)
	c := opxv1.NewClientServiceClient(r.conn)
	s, err := c.SendMessage(r.ctx, &opxv1.ClientMessageRequest{Content: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	d, _ := agent.Recv()
	msg := d.GetProcessRequest().MessageId
	// A tool call without an id or a tool, and one for a message not in flight.
	agent.Send(&opxv1.AgentEvent{Event: &opxv1.AgentEvent_ToolCall{ToolCall: &opxv1.ToolCallProposed{MessageId: msg}}})
	if res := mustRecv(t, agent).GetToolResult(); res == nil || !res.IsError {
		t.Errorf("empty tool call: %v", res)
	}
	agent.Send(&opxv1.AgentEvent{Event: &opxv1.AgentEvent_ToolCall{ToolCall: &opxv1.ToolCallProposed{MessageId: "forged", CallId: "x", ToolName: "read_file", ArgumentsJson: "{}"}}})
	if res := mustRecv(t, agent).GetToolResult(); res == nil || !res.IsError || !strings.Contains(res.Content, "no message in flight") {
		t.Errorf("tool call for a forged message: %v", res)
	}
	// Hostile arguments: not an object, a path out of the workspace.
	for _, args := range []string{`"x"`, `{"path":"../../etc/passwd"}`, `{"path":"/etc/passwd"}`} {
		agent.Send(&opxv1.AgentEvent{Event: &opxv1.AgentEvent_ToolCall{ToolCall: &opxv1.ToolCallProposed{MessageId: msg, CallId: "c-" + args, ToolName: "read_file", ArgumentsJson: args}}})
		if res := mustRecv(t, agent).GetToolResult(); res == nil || !res.IsError {
			t.Errorf("args %s: %v", args, res)
		}
	}
	agent.Send(&opxv1.AgentEvent{Event: &opxv1.AgentEvent_ResponseComplete{ResponseComplete: &opxv1.AgentResponseComplete{MessageId: msg, Content: "done"}}})
	for {
		if _, err := s.Recv(); err != nil {
			break
		}
	}
	got := strings.Join(r.types(t), " ")
	if !strings.Contains(got, "agent.error") || strings.Count(got, "exec.started") != 2 {
		t.Errorf("ledger %s: want the malformed call recorded as agent.error and the two path attempts executed (and refused by the workspace)", got)
	}
}

func mustRecv(t *testing.T, s opxv1.AgentService_RunSessionClient) *opxv1.EngineDirective {
	t.Helper()
	d, err := s.Recv()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// connectAgentWith opens the agent stream presenting canary.
func (r *running) connectAgentWith(t testing.TB, token, canary string) opxv1.AgentService_RunSessionClient {
	t.Helper()
	r.agentCtx = agentCtx(token)
	s, err := opxv1.NewAgentServiceClient(r.conn).RunSession(r.agentCtx)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Send(&opxv1.AgentEvent{Event: &opxv1.AgentEvent_AgentReady{AgentReady: &opxv1.AgentReady{
		AgentId: "test-agent", Token: token, SandboxCanaryJson: canary}}}); err != nil {
		t.Fatal(err)
	}
	return s
}

const partialCanary = `{"verified":false,"status":"partial","platform":"linux","mechanism":"landlock","probes":[` +
	`{"name":"file_read","status":"blocked"},{"name":"network","status":"failed","error":"sandbox did not block outbound connection"}],` +
	`"summary":"Sandbox verified: 1/2 probes blocked (file_read). Failed: network.","timestamp":"2026-11-22T10:00:00Z"}`

// TestEngine_RefusesUnsandboxedAgent: an agent whose canary is partial, or
// unavailable when the sandbox is required, is refused and recorded, is not
// respawned, and clients are told why.
func TestEngine_RefusesUnsandboxedAgent(t *testing.T) {
	for _, tt := range []struct {
		name, canary string
		require      bool
	}{
		{"partial", partialCanary, false},
		{"unavailable but required", unavailableCanary, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var placeholder *exec.Cmd
			var spawns atomic.Int32
			r := startEngine(t, func(o *engine.Options) {
				o.RequireSandbox = tt.require
				spawn := o.SpawnAgent
				o.SpawnAgent = func(ctx context.Context, l engine.AgentLaunch) (*exec.Cmd, error) {
					spawns.Add(1)
					if l.Canary.ReadFile == "" || l.Canary.WriteDir == "" || l.Canary.ConnectAddr == "" {
						t.Errorf("no canary targets: %+v", l.Canary)
					}
					cmd, err := spawn(ctx, l)
					placeholder = cmd
					return cmd, err
				}
			})
			s := r.connectAgentWith(t, <-r.tokens, tt.canary)
			if _, err := s.Recv(); status.Code(err) != codes.PermissionDenied {
				t.Fatalf("Recv = %v, want PermissionDenied", err)
			}
			// The refused agent exits; the engine must not start another.
			placeholder.Process.Kill()
			c := opxv1.NewClientServiceClient(r.conn)
			deadline := time.Now().Add(10 * time.Second)
			for {
				st, err := c.GetStatus(r.ctx, &opxv1.StatusRequest{})
				if err != nil {
					t.Fatal(err)
				}
				if strings.Contains(strings.Join(r.types(t), " "), "agent.crashed") {
					if !strings.HasPrefix(st.SandboxSummary, "agent refused: ") {
						t.Errorf("status %q %q", st.SandboxStatus, st.SandboxSummary)
					}
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the refused agent's exit was not recorded")
				}
				time.Sleep(20 * time.Millisecond)
			}
			time.Sleep(1500 * time.Millisecond) // longer than the respawn pause
			if n := spawns.Load(); n != 1 {
				t.Errorf("%d spawns: a refused agent was respawned", n)
			}
			m, err := c.SendMessage(r.ctx, &opxv1.ClientMessageRequest{Content: "hello"})
			if err == nil {
				_, err = m.Recv()
			}
			if status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "refused") {
				t.Errorf("SendMessage = %v, want FailedPrecondition naming the refusal", err)
			}
			h, _ := r.l.Head()
			var canary *event.SandboxCanary
			var crashed *event.AgentCrashed
			r.l.Range(0, h.Seq, func(e ledger.Entry) error {
				p, err := event.Decode(e)
				if err != nil {
					return err
				}
				switch x := p.(type) {
				case *event.SandboxCanary:
					canary = x
				case *event.AgentCrashed:
					crashed = x
				}
				return nil
			})
			if canary == nil || canary.Action != "killed" || crashed == nil || crashed.Respawn {
				t.Errorf("recorded canary %+v, crash %+v", canary, crashed)
			}
		})
	}
}

// TestEngine_AgentGoneMidToolCall: the agent proposes a tool call and dies
// before the result arrives. The call is still recorded to its end, the
// crash is recorded, the client hears of it, and after the respawn the
// session goes on.
func TestEngine_AgentGoneMidToolCall(t *testing.T) {
	var mu sync.Mutex
	var procs []*exec.Cmd
	r := startEngine(t, func(o *engine.Options) {
		spawn := o.SpawnAgent
		o.SpawnAgent = func(ctx context.Context, l engine.AgentLaunch) (*exec.Cmd, error) {
			cmd, err := spawn(ctx, l)
			mu.Lock()
			procs = append(procs, cmd)
			mu.Unlock()
			return cmd, err
		}
	})
	tok1 := <-r.tokens
	actx, cancel := context.WithCancel(agentCtx(tok1))
	a1, err := opxv1.NewAgentServiceClient(r.conn).RunSession(actx)
	if err != nil {
		t.Fatal(err)
	}
	a1.Send(&opxv1.AgentEvent{Event: &opxv1.AgentEvent_AgentReady{AgentReady: &opxv1.AgentReady{AgentId: "a1", Token: tok1, SandboxCanaryJson: unavailableCanary}}})
	c := opxv1.NewClientServiceClient(r.conn)
	s1, err := c.SendMessage(r.ctx, &opxv1.ClientMessageRequest{Content: "read README.md"})
	if err != nil {
		t.Fatal(err)
	}
	pr := mustRecv(t, a1).GetProcessRequest()
	a1.Send(&opxv1.AgentEvent{Event: &opxv1.AgentEvent_ToolCall{ToolCall: &opxv1.ToolCallProposed{CallId: "c1", ToolName: "read_file", ArgumentsJson: `{"path":"README.md"}`, MessageId: pr.MessageId}}})
	// The agent dies with the call in flight: once the engine has the
	// proposal, before the result is back.
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(strings.Join(r.types(t), " "), "tool.proposed"); {
		if time.Now().After(deadline) {
			t.Fatal("the proposal never reached the engine")
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	mu.Lock()
	procs[0].Process.Kill()
	mu.Unlock()
	var last *opxv1.PipelineEvent
	for {
		ev, err := s1.Recv()
		if err != nil {
			break
		}
		last = ev
	}
	if last == nil || last.Type != "error" || !strings.Contains(string(last.Data), "agent crashed") {
		t.Errorf("the client's last event %v, want the crash", last)
	}
	// A new agent (new token) takes over; the session continues.
	a2 := r.connectAgent(t, <-r.tokens)
	s2, err := c.SendMessage(r.ctx, &opxv1.ClientMessageRequest{SessionId: pr.SessionId, Content: "again"})
	if err != nil {
		t.Fatal(err)
	}
	pr2 := mustRecv(t, a2).GetProcessRequest()
	if pr2 == nil || pr2.SessionId != pr.SessionId || len(pr2.History) != 1 {
		t.Fatalf("second request %v: want the same session, with the first message in its history", pr2)
	}
	a2.Send(&opxv1.AgentEvent{Event: &opxv1.AgentEvent_ResponseComplete{ResponseComplete: &opxv1.AgentResponseComplete{MessageId: pr2.MessageId, Content: "done"}}})
	for {
		ev, err := s2.Recv()
		if err != nil {
			t.Fatalf("second message: %v", err)
		}
		if ev.Type == "response_complete" {
			break
		}
	}
	got := strings.Join(r.types(t), " ")
	// The crash may land between the call's start and its completion: the
	// call is recorded to its end either way.
	for _, want := range []string{"tool.proposed shield.verdict exec.started", "exec.completed", "agent.crashed", "agent.response_complete"} {
		if !strings.Contains(got, want) {
			t.Errorf("ledger lacks %q:\n%s", want, got)
		}
	}
}

// TestEngine_LongMultibyteIDsClipped: client-chosen ids longer than the
// engine keeps are clipped on a character boundary, so a multibyte
// character at the cut cannot put invalid UTF-8 into an entry (which the
// ledger would refuse, stopping the engine).
func TestEngine_LongMultibyteIDsClipped(t *testing.T) {
	r := startEngine(t)
	agent := r.connectAgent(t, <-r.tokens)
	c := opxv1.NewClientServiceClient(r.conn)
	id := strings.Repeat("a", 127) + "é"
	s, err := c.SendMessage(r.ctx, &opxv1.ClientMessageRequest{Content: "hello", MessageId: id})
	if err != nil {
		t.Fatal(err)
	}
	d := mustRecv(t, agent)
	msg := d.GetProcessRequest().GetMessageId()
	if msg != strings.Repeat("a", 127) {
		t.Errorf("message id %q, want it clipped before the é", msg)
	}
	agent.Send(&opxv1.AgentEvent{Event: &opxv1.AgentEvent_ResponseComplete{ResponseComplete: &opxv1.AgentResponseComplete{MessageId: msg, Content: "done"}}})
	for {
		if _, err := s.Recv(); err != nil {
			break
		}
	}
	if got := strings.Join(r.types(t), " "); !strings.Contains(got, "client.message") || !strings.Contains(got, "agent.response_complete") {
		t.Errorf("ledger %s", got)
	}
}
