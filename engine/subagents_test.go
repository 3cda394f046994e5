package engine_test

import (
	"context"
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// subRig is an engine with sub-agents enabled whose processes are
// placeholders: the test plays the parent agent (over RunSession) and
// each sub-agent (over RunSubAgent with the token it was launched with).
type subRig struct {
	*running
	parent   opxv1.AgentService_RunSessionClient
	launches chan engine.AgentLaunch
	msgID    string
}

func startSubRig(t *testing.T, cfg engine.AgentsConfig, tune ...func(*engine.Options)) *subRig {
	t.Helper()
	launches := make(chan engine.AgentLaunch, 8)
	cfg.Enabled = true
	r := startEngine(t, func(o *engine.Options) {
		o.Agents = cfg
		main := o.SpawnAgent
		o.SpawnAgent = func(ctx context.Context, l engine.AgentLaunch) (*exec.Cmd, error) {
			if l.SubAgentID == "" {
				return main(ctx, l)
			}
			cmd := exec.Command("sleep", "60")
			if err := cmd.Start(); err != nil {
				return nil, err
			}
			launches <- l
			return cmd, nil
		}
		for _, f := range tune {
			f(o)
		}
	})
	rig := &subRig{running: r, launches: launches}
	rig.parent = r.connectAgent(t, <-r.tokens)
	// A message in flight for the parent's calls; its stream is left
	// open (the engine cancels it at the end).
	go func() {
		s, err := opxv1.NewClientServiceClient(r.conn).SendMessage(r.ctx, &opxv1.ClientMessageRequest{Content: "work"})
		if err == nil {
			for {
				if _, err := s.Recv(); err != nil {
					return
				}
			}
		}
	}()
	for {
		d, err := rig.parent.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if pr := d.GetProcessRequest(); pr != nil {
			rig.msgID = pr.MessageId
			return rig
		}
	}
}

// call makes the parent propose a tool call and returns the result.
func (r *subRig) call(t *testing.T, callID, tool, args string) *opxv1.ToolResultDelivery {
	t.Helper()
	if err := r.parent.Send(&opxv1.AgentEvent{Event: &opxv1.AgentEvent_ToolCall{ToolCall: &opxv1.ToolCallProposed{
		CallId: callID, ToolName: tool, ArgumentsJson: args, MessageId: r.msgID}}}); err != nil {
		t.Fatal(err)
	}
	for {
		d, err := r.parent.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if res := d.GetToolResult(); res != nil && res.CallId == callID {
			return res
		}
	}
}

// register opens the sub-agent stream of launch l and presents ready.
func (r *subRig) register(t *testing.T, l engine.AgentLaunch, ready *opxv1.AgentReady) opxv1.SubAgentService_RunSubAgentClient {
	t.Helper()
	s, err := opxv1.NewSubAgentServiceClient(r.conn).RunSubAgent(agentCtx(l.Token))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Send(&opxv1.AgentEvent{Event: &opxv1.AgentEvent_AgentReady{AgentReady: ready}}); err != nil {
		t.Fatal(err)
	}
	return s
}

func readyOf(l engine.AgentLaunch) *opxv1.AgentReady {
	return &opxv1.AgentReady{AgentId: l.SubAgentID, Token: l.Token, SandboxCanaryJson: unavailableCanary, ParentSessionId: l.ParentSession}
}

// entries returns the committed entries.
func (r *subRig) entries(t *testing.T) []ledger.Entry {
	t.Helper()
	if err := r.l.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	h, _ := r.l.Head()
	var out []ledger.Entry
	r.l.Range(0, h.Seq, func(e ledger.Entry) error { out = append(out, e); return nil })
	return out
}

// waitEntry waits until an entry for which match holds is committed.
func (r *subRig) waitEntry(t *testing.T, match func(ledger.Entry) bool) ledger.Entry {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); {
		for _, e := range r.entries(t) {
			if match(e) {
				return e
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("no such entry")
	return ledger.Entry{}
}

func dataHas(e ledger.Entry, s string) bool { return strings.Contains(string(e.Data), s) }

// TestSubAgents_SpawnRefusals: granted lists are validated at spawn (an
// unknown name, an agent tool, a memory write: refused, nothing
// spawned), and a spawn over agents.max_concurrent is refused; each
// refusal is the recorded result of an executed call.
func TestSubAgents_SpawnRefusals(t *testing.T) {
	r := startSubRig(t, engine.AgentsConfig{MaxConcurrent: 1})
	for _, tt := range []struct{ args, want string }{
		{`{"task":"x","tools":["no_such_tool"]}`, `no tool or group named "no_such_tool"`},
		{`{"task":"x","tools":["spawn_agent"]}`, "cannot be granted to a sub-agent (no agent tools"},
		{`{"task":"x","tools":["agents"]}`, "cannot be granted"},
		{`{"task":"x","tools":["memory_append"]}`, "no memory writes"},
		{`{"task":"x","tools":["load_tools"]}`, "cannot be granted"},
		{`{"task":""}`, "needs a task"},
		{`{"task":"x","model":"gpt-4o\"}, \"x\": {"}`, "is not a model name"},
	} {
		res := r.call(t, "c-"+tt.args, "spawn_agent", tt.args)
		if !res.IsError || !strings.Contains(res.Content, tt.want) {
			t.Errorf("spawn_agent %s = %q, want an error with %q", tt.args, res.Content, tt.want)
		}
	}
	// A group grants its members a sub-agent may have: memory gives
	// memory_read and memory_search, never memory_append.
	res := r.call(t, "c-ok", "spawn_agent", `{"task":"first","tools":["memory"]}`)
	if res.IsError || !strings.Contains(res.Content, "memory_read, memory_search;") {
		t.Fatalf("spawn_agent = %q", res.Content)
	}
	l := <-r.launches
	if !strings.HasPrefix(res.Content, l.SubAgentID+" ") || l.ParentSession == "" || l.MaxRounds != 15 || len(l.Token) != 32 {
		t.Errorf("launch %+v for result %q", l, res.Content)
	}
	res = r.call(t, "c-over", "spawn_agent", `{"task":"second"}`)
	if !res.IsError || !strings.Contains(res.Content, "agents.max_concurrent") {
		t.Errorf("spawn over the limit = %q", res.Content)
	}
	n := 0
	for _, e := range r.entries(t) {
		if e.Type == event.TypeSubAgentSpawned {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d subagent.spawned, want 1", n)
	}
	// cancel_agent ends it once; a second cancel says it has ended.
	if res := r.call(t, "c-cancel", "cancel_agent", `{"id":"`+l.SubAgentID+`"}`); res.IsError {
		t.Errorf("cancel_agent = %q", res.Content)
	}
	if res := r.call(t, "c-cancel2", "cancel_agent", `{"id":"`+l.SubAgentID+`"}`); !res.IsError || !strings.Contains(res.Content, "already ended (cancelled)") {
		t.Errorf("second cancel_agent = %q", res.Content)
	}
	if res := r.call(t, "c-msg", "agent_message", `{"id":"`+l.SubAgentID+`","message":"more"}`); !res.IsError || !strings.Contains(res.Content, "takes no more messages") {
		t.Errorf("agent_message after the end = %q", res.Content)
	}
}

// TestSubAgents_TokenAndGateway: a sub-agent's token opens its stream
// once (a second registration with it is refused and recorded, the
// first stream goes on), the main agent's token opens no sub-agent
// stream, a model call for a message the sub-agent is not working on is
// refused, and the engine refuses the model call over agents.max_rounds
// and ends the sub-agent failed max_rounds.
func TestSubAgents_TokenAndGateway(t *testing.T) {
	r := startSubRig(t, engine.AgentsConfig{MaxRounds: 1})
	if res := r.call(t, "c1", "spawn_agent", `{"task":"read the readme"}`); res.IsError {
		t.Fatal(res.Content)
	}
	l := <-r.launches
	s := r.register(t, l, readyOf(l))
	d, err := s.Recv()
	if err != nil || d.GetProcessRequest() == nil {
		t.Fatalf("first directive %v, %v", d, err)
	}
	pr := d.GetProcessRequest()
	if pr.SessionId != l.ParentSession || pr.Content != "read the readme" || pr.MessageId != l.SubAgentID+"_m1" {
		t.Errorf("process request %+v", pr)
	}
	for _, tool := range pr.Tools {
		if tool.Group == engine.GroupAgents || tool.Name == "http_request" || tool.Name == "write_file" {
			t.Errorf("granted by default: %s", tool.Name)
		}
	}

	// The same token again: refused, recorded, the first stream stays.
	again := r.register(t, l, readyOf(l))
	if _, err := again.Recv(); status.Code(err) != codes.PermissionDenied {
		t.Errorf("second registration: %v, want PermissionDenied", err)
	}
	r.waitEntry(t, func(e ledger.Entry) bool {
		return e.Type == event.TypeAgentError && dataHas(e, "a second registration with the token of sub-agent "+l.SubAgentID)
	})
	// The main agent's token opens no sub-agent stream.
	main, err := opxv1.NewSubAgentServiceClient(r.conn).RunSubAgent(r.agentCtx)
	if err == nil {
		_, err = main.Recv()
	}
	if status.Code(err) != codes.Unauthenticated {
		t.Errorf("RunSubAgent with the main agent's token: %v", err)
	}

	gw := opxv1.NewLLMGatewayClient(r.conn)
	drain := func(req *opxv1.LLMRequest) error {
		c, err := gw.Complete(agentCtx(l.Token), req)
		if err != nil {
			return err
		}
		for {
			if _, err := c.Recv(); err != nil {
				if err == io.EOF {
					return nil
				}
				return err
			}
		}
	}
	msgs := []*opxv1.ChatMessage{{Role: "user", Content: "read the readme"}}
	if err := drain(&opxv1.LLMRequest{SessionId: l.ParentSession, MessageId: r.msgID, Messages: msgs}); status.Code(err) != codes.PermissionDenied {
		t.Errorf("a model call for the parent's message with the sub-agent's token: %v", err)
	}
	if err := drain(&opxv1.LLMRequest{SessionId: l.ParentSession, MessageId: pr.MessageId, Messages: msgs}); err != nil {
		t.Fatalf("the sub-agent's first model call: %v", err)
	}
	if err := drain(&opxv1.LLMRequest{SessionId: l.ParentSession, MessageId: pr.MessageId, Messages: msgs}); status.Code(err) != codes.ResourceExhausted {
		t.Errorf("the model call over max_rounds: %v, want ResourceExhausted", err)
	}
	failed := r.waitEntry(t, func(e ledger.Entry) bool { return e.Type == event.TypeSubAgentFailed })
	var f event.SubAgentFailed
	json.Unmarshal(failed.Data, &f)
	if f.SubAgentID != l.SubAgentID || f.Reason != event.SubAgentMaxRounds {
		t.Errorf("subagent.failed %s", failed.Data)
	}
	// The parent is told.
	res := r.call(t, "c2", "agent_result", `{"id":"`+l.SubAgentID+`"}`)
	if !res.IsError || !strings.Contains(res.Content, "max_rounds") {
		t.Errorf("agent_result = %q", res.Content)
	}
	// Its token is dead with it: the gateway refuses it before any
	// handler.
	if err := drain(&opxv1.LLMRequest{SessionId: l.ParentSession, MessageId: pr.MessageId, Messages: msgs}); status.Code(err) != codes.Unauthenticated {
		t.Errorf("a model call with an ended sub-agent's token: %v, want Unauthenticated", err)
	}
}

// TestSubAgents_RegistrationRefused: a sub-agent whose canary shows a
// sandbox that does not hold is refused exactly as the main agent
// (sandbox.canary killed with its subagent_id) and fails refused; an
// AgentReady that names another sub-agent than its token's is refused
// and fails that sub-agent too. The parent learns both through
// agent_result.
func TestSubAgents_RegistrationRefused(t *testing.T) {
	r := startSubRig(t, engine.AgentsConfig{})
	for i, tt := range []struct {
		name  string
		ready func(engine.AgentLaunch) *opxv1.AgentReady
		want  string
	}{
		{"partial canary", func(l engine.AgentLaunch) *opxv1.AgentReady {
			rd := readyOf(l)
			rd.SandboxCanaryJson = partialCanary
			return rd
		}, "the sandbox does not hold"},
		{"another id", func(l engine.AgentLaunch) *opxv1.AgentReady {
			rd := readyOf(l)
			rd.AgentId = "sub_000000000000"
			return rd
		}, "but the token is sub-agent"},
		{"another session", func(l engine.AgentLaunch) *opxv1.AgentReady {
			rd := readyOf(l)
			rd.ParentSessionId = "ses_other"
			return rd
		}, "names parent session"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			call := "spawn-" + string(rune('a'+i))
			if res := r.call(t, call, "spawn_agent", `{"task":"x"}`); res.IsError {
				t.Fatal(res.Content)
			}
			l := <-r.launches
			s := r.register(t, l, tt.ready(l))
			if _, err := s.Recv(); status.Code(err) != codes.PermissionDenied {
				t.Errorf("registration: %v, want PermissionDenied", err)
			}
			res := r.call(t, call+"-result", "agent_result", `{"id":"`+l.SubAgentID+`"}`)
			if !res.IsError || !strings.Contains(res.Content, "refused") || !strings.Contains(res.Content, tt.want) {
				t.Errorf("agent_result = %q", res.Content)
			}
		})
	}
	var killed int
	for _, e := range r.entries(t) {
		if e.Type == event.TypeSandboxCanary && dataHas(e, `"action":"killed"`) && dataHas(e, `"subagent_id":"sub_`) {
			killed++
		}
	}
	if killed != 1 {
		t.Errorf("%d sandbox.canary killed entries of sub-agents, want 1", killed)
	}
}

// TestSubAgents_FollowUp: agent_message queues a follow-up for a running
// sub-agent; it is sent (with the first turn as history) once the first
// answer is in, and the result handed back is the last answer.
func TestSubAgents_FollowUp(t *testing.T) {
	r := startSubRig(t, engine.AgentsConfig{})
	if res := r.call(t, "c1", "spawn_agent", `{"task":"first"}`); res.IsError {
		t.Fatal(res.Content)
	}
	l := <-r.launches
	s := r.register(t, l, readyOf(l))
	d, err := s.Recv()
	if err != nil || d.GetProcessRequest() == nil {
		t.Fatalf("first directive %v, %v", d, err)
	}
	if res := r.call(t, "c2", "agent_message", `{"id":"`+l.SubAgentID+`","message":"and then?"}`); res.IsError {
		t.Fatal(res.Content)
	}
	answer := func(msgID, text string) {
		if err := s.Send(&opxv1.AgentEvent{Event: &opxv1.AgentEvent_ResponseComplete{ResponseComplete: &opxv1.AgentResponseComplete{
			MessageId: msgID, Content: text}}}); err != nil {
			t.Fatal(err)
		}
	}
	answer(l.SubAgentID+"_m1", "one")
	d, err = s.Recv()
	pr := d.GetProcessRequest()
	if err != nil || pr == nil || pr.MessageId != l.SubAgentID+"_m2" || pr.Content != "and then?" || len(pr.History) != 2 || pr.History[1].Content != "one" {
		t.Fatalf("follow-up %v, %v", d, err)
	}
	// An answer for the finished turn is refused: it is not current.
	answer(l.SubAgentID+"_m1", "stale")
	answer(l.SubAgentID+"_m2", "two")
	res := r.call(t, "c3", "agent_result", `{"id":"`+l.SubAgentID+`"}`)
	if res.IsError || res.Content != "two" {
		t.Errorf("agent_result = %q", res.Content)
	}
	completed := r.waitEntry(t, func(e ledger.Entry) bool { return e.Type == event.TypeSubAgentCompleted })
	if !dataHas(completed, `"result":"two"`) {
		t.Errorf("subagent.completed %s", completed.Data)
	}
}

// TestSubAgents_NothingAfterEnd: after cancel_agent, a call the
// sub-agent's stream still sends is not read: the stream is closed, the
// refusal recorded, nothing of it proposed; the ledger verifies strictly
// (the rig's cleanup).
func TestSubAgents_NothingAfterEnd(t *testing.T) {
	r := startSubRig(t, engine.AgentsConfig{})
	if res := r.call(t, "c1", "spawn_agent", `{"task":"x"}`); res.IsError {
		t.Fatal(res.Content)
	}
	l := <-r.launches
	s := r.register(t, l, readyOf(l))
	if d, err := s.Recv(); err != nil || d.GetProcessRequest() == nil {
		t.Fatalf("first directive %v, %v", d, err)
	}
	if res := r.call(t, "c2", "cancel_agent", `{"id":"`+l.SubAgentID+`"}`); res.IsError {
		t.Fatal(res.Content)
	}
	if err := s.Send(&opxv1.AgentEvent{Event: &opxv1.AgentEvent_ToolCall{ToolCall: &opxv1.ToolCallProposed{
		CallId: "late", ToolName: "read_file", ArgumentsJson: `{"path":"README.md"}`, MessageId: l.SubAgentID + "_m1"}}}); err != nil {
		t.Fatal(err)
	}
	for {
		d, err := s.Recv()
		if err != nil {
			if status.Code(err) != codes.Aborted {
				t.Errorf("the stream after the end: %v, want Aborted", err)
			}
			break
		}
		if res := d.GetToolResult(); res != nil {
			t.Errorf("the late call was answered: %q", res.Content)
		}
	}
	r.waitEntry(t, func(e ledger.Entry) bool {
		return e.Type == event.TypeAgentError && dataHas(e, "after its end; its stream is closed")
	})
	ended := false
	for _, e := range r.entries(t) {
		switch {
		case e.Type == event.TypeSubAgentCancelled:
			ended = true
		case ended && dataHas(e, l.SubAgentID) && (e.Type == event.TypeToolProposed || e.Type == event.TypeExecStarted || e.Type == event.TypeLLMRequest):
			t.Errorf("%s of the cancelled sub-agent after its end: %s", e.Type, e.Data)
		}
	}
}

// TestSubAgents_ProtocolFlood: a sub-agent that keeps sending events for
// a message it is not working on is ended after maxProtocolErrors
// (agent_error), and the ledger holds a bounded number of them.
func TestSubAgents_ProtocolFlood(t *testing.T) {
	r := startSubRig(t, engine.AgentsConfig{})
	if res := r.call(t, "c1", "spawn_agent", `{"task":"x"}`); res.IsError {
		t.Fatal(res.Content)
	}
	l := <-r.launches
	s := r.register(t, l, readyOf(l))
	if d, err := s.Recv(); err != nil || d.GetProcessRequest() == nil {
		t.Fatalf("first directive %v, %v", d, err)
	}
	for i := 0; i < 1000; i++ {
		if err := s.Send(&opxv1.AgentEvent{Event: &opxv1.AgentEvent_LlmToken{LlmToken: &opxv1.LLMTokenEmitted{MessageId: "other", Token: "x"}}}); err != nil {
			break // the engine ended the stream
		}
	}
	failed := r.waitEntry(t, func(e ledger.Entry) bool { return e.Type == event.TypeSubAgentFailed })
	if !dataHas(failed, "protocol violations") || !dataHas(failed, `"reason":"agent_error"`) {
		t.Errorf("subagent.failed %s", failed.Data)
	}
	s.CloseSend()
	for {
		if _, err := s.Recv(); err != nil {
			break
		}
	}
	n := 0
	for _, e := range r.entries(t) {
		if e.Type == event.TypeAgentError && dataHas(e, l.SubAgentID) {
			n++
		}
	}
	if n > 17 {
		t.Errorf("%d agent.error entries for the flood, want at most 17 (16, and the stream's closing)", n)
	}
}
