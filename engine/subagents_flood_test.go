package engine_test

import (
	"errors"
	"io"
	"sync"
	"testing"

	"google.golang.org/grpc"

	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
)

// spawnRegistered spawns one sub-agent and registers it; it returns the
// launch, its stream after the first ProcessRequest, and that message.
func spawnRegistered(t *testing.T, r *subRig, call string) (engine.AgentLaunch, opxv1.SubAgentService_RunSubAgentClient, string) {
	t.Helper()
	if res := r.call(t, call, "spawn_agent", `{"task":"x"}`); res.IsError {
		t.Fatal(res.Content)
	}
	l := <-r.launches
	s := r.register(t, l, readyOf(l))
	d, err := s.Recv()
	if err != nil || d.GetProcessRequest() == nil {
		t.Fatalf("first directive %v, %v", d, err)
	}
	return l, s, d.GetProcessRequest().MessageId
}

func (r *subRig) count(t *testing.T, match func(ledger.Entry) bool) int {
	n := 0
	for _, e := range r.entries(t) {
		if match(e) {
			n++
		}
	}
	return n
}

// TestSubAgents_GatewayWrongMessageFlood (REVIEW15 F1): model calls for
// a message the sub-agent is not working on are counted violations: the
// flood ends it and the record is bounded.
func TestSubAgents_GatewayWrongMessageFlood(t *testing.T) {
	r := startSubRig(t, engine.AgentsConfig{})
	l, _, _ := spawnRegistered(t, r, "c1")
	gw := opxv1.NewLLMGatewayClient(r.conn)
	for i := 0; i < 200; i++ {
		c, err := gw.Complete(agentCtx(l.Token), &opxv1.LLMRequest{SessionId: l.ParentSession, MessageId: "not-mine",
			Messages: []*opxv1.ChatMessage{{Role: "user", Content: "x"}}})
		if err != nil {
			break
		}
		if _, err := c.Recv(); err != nil && err != io.EOF {
			continue
		}
	}
	r.waitEntry(t, func(e ledger.Entry) bool { return e.Type == event.TypeSubAgentFailed && dataHas(e, l.SubAgentID) })
	if n := r.count(t, func(e ledger.Entry) bool { return e.Type == event.TypeAgentError && dataHas(e, l.SubAgentID) }); n > 17 {
		t.Errorf("%d agent.error entries from 200 refused model calls of one sub-agent, want at most 17", n)
	}
}

// TestSubAgents_ReRegistrationFlood (REVIEW15 F1): the holder of a live
// token opening RunSubAgent again and again is refused each time, each a
// counted violation: bounded, and the flood ends the sub-agent.
func TestSubAgents_ReRegistrationFlood(t *testing.T) {
	r := startSubRig(t, engine.AgentsConfig{})
	l, _, _ := spawnRegistered(t, r, "c1")
	for i := 0; i < 100; i++ {
		// Once the flood ended it, its token opens nothing: refused.
		again, err := opxv1.NewSubAgentServiceClient(r.conn).RunSubAgent(agentCtx(l.Token))
		if err != nil {
			continue
		}
		if err := again.Send(&opxv1.AgentEvent{Event: &opxv1.AgentEvent_AgentReady{AgentReady: readyOf(l)}}); err == nil {
			again.Recv()
		}
	}
	r.waitEntry(t, func(e ledger.Entry) bool { return e.Type == event.TypeSubAgentFailed && dataHas(e, l.SubAgentID) })
	n := r.count(t, func(e ledger.Entry) bool {
		return (e.Type == event.TypeAgentError || e.Type == event.TypeAgentReady) && dataHas(e, l.SubAgentID)
	})
	if n > 40 {
		t.Errorf("%d agent.ready/agent.error entries for 100 re-registrations of one live sub-agent: not bounded", n)
	}
}

// TestSubAgents_StreamFloods (REVIEW15 F1): tool-defs requests, errors
// and answers about another message, and tool calls without a call id
// are counted violations too.
func TestSubAgents_StreamFloods(t *testing.T) {
	for _, tt := range []struct {
		name string
		ev   func(msg string) *opxv1.AgentEvent
	}{
		{"tool_defs_request", func(msg string) *opxv1.AgentEvent {
			return &opxv1.AgentEvent{Event: &opxv1.AgentEvent_ToolDefsRequest{ToolDefsRequest: &opxv1.ToolDefsRequest{CallId: "d", Groups: []string{"files"}}}}
		}},
		{"error_other_message", func(msg string) *opxv1.AgentEvent {
			return &opxv1.AgentEvent{Event: &opxv1.AgentEvent_Error{Error: &opxv1.AgentError{MessageId: "other", Code: "x", Message: "flood"}}}
		}},
		{"answer_other_message", func(msg string) *opxv1.AgentEvent {
			return &opxv1.AgentEvent{Event: &opxv1.AgentEvent_ResponseComplete{ResponseComplete: &opxv1.AgentResponseComplete{MessageId: "other", Content: "flood"}}}
		}},
		{"tool_call_no_id", func(msg string) *opxv1.AgentEvent {
			return &opxv1.AgentEvent{Event: &opxv1.AgentEvent_ToolCall{ToolCall: &opxv1.ToolCallProposed{MessageId: msg, ToolName: "read_file", ArgumentsJson: `{}`}}}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := startSubRig(t, engine.AgentsConfig{})
			l, s, msg := spawnRegistered(t, r, "c1")
			base := len(r.entries(t))
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					if _, err := s.Recv(); err != nil {
						return
					}
				}
			}()
			for i := 0; i < 300; i++ {
				if err := s.Send(tt.ev(msg)); err != nil {
					break
				}
			}
			r.waitEntry(t, func(e ledger.Entry) bool { return e.Type == event.TypeSubAgentFailed && dataHas(e, l.SubAgentID) })
			s.CloseSend()
			wg.Wait()
			if n := len(r.entries(t)) - base; n > 60 {
				t.Errorf("%d entries recorded for 300 %s events of one sub-agent: not bounded", n, tt.name)
			}
		})
	}
}

// TestSubAgents_HeldStreamOutlivesToken (REVIEW15 F2): a model call
// opened with a sub-agent's token while it lived, whose request comes
// after its end, is refused: never served on the session agent's path.
// (Whether the authenticator saw the headers before or after the end,
// the call must be refused.)
func TestSubAgents_HeldStreamOutlivesToken(t *testing.T) {
	r := startSubRig(t, engine.AgentsConfig{MaxRounds: 1})
	l, s, msg := spawnRegistered(t, r, "c1")
	cs, err := r.conn.NewStream(agentCtx(l.Token), &grpc.StreamDesc{ServerStreams: true, ClientStreams: true}, "/opx.v1.LLMGateway/Complete")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Send(&opxv1.AgentEvent{Event: &opxv1.AgentEvent_ResponseComplete{ResponseComplete: &opxv1.AgentResponseComplete{MessageId: msg, Content: "done"}}}); err != nil {
		t.Fatal(err)
	}
	r.waitEntry(t, func(e ledger.Entry) bool { return e.Type == event.TypeSubAgentCompleted })
	if err := cs.SendMsg(&opxv1.LLMRequest{SessionId: l.ParentSession, MessageId: r.msgID,
		Messages: []*opxv1.ChatMessage{{Role: "user", Content: "x"}}}); err != nil && !errors.Is(err, io.EOF) {
		// io.EOF: the engine ended the stream before the request (it
		// refused the token at once): its status is RecvMsg's below.
		t.Fatal(err)
	}
	cs.CloseSend()
	served := 0
	for {
		var c opxv1.LLMChunk
		if err := cs.RecvMsg(&c); err != nil {
			break
		}
		served++
	}
	n := r.count(t, func(e ledger.Entry) bool {
		return e.Type == event.TypeLLMRequest && dataHas(e, `"message_id":"`+r.msgID+`"`)
	})
	if served > 0 || n > 0 {
		t.Errorf("after sub-agent %s ended, a call with its token was served (%d chunks), %d llm.request recorded as the parent's", l.SubAgentID, served, n)
	}
}
