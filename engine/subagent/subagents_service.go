package subagent

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/engine/agentwire"
	"github.com/opx-dev/opx/engine/auth"
	"github.com/opx-dev/opx/internal/textclip"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// subAgentService serves SubAgentService.RunSubAgent: each sub-agent's
// one stream, opened with its own token.
type subAgentService struct {
	opxv1.UnimplementedSubAgentServiceServer
	e *Manager
}

// RunSubAgent registers the sub-agent whose token the stream presents
// (once: the token is single-use), judges its canary exactly as the main
// agent's, sends it its task and handles its events, each recorded with
// its subagent_id in its parent's session.
func (svc *subAgentService) RunSubAgent(stream opxv1.SubAgentService_RunSubAgentServer) error {
	e := svc.e
	ctx := stream.Context()
	// The authenticator let the stream through with a live sub-agent's
	// token; it names the sub-agent.
	s := e.subs.byTok(auth.MetadataValue(ctx, opxv1.AgentTokenHeader))
	if s == nil {
		return status.Error(codes.Unauthenticated, "no live sub-agent has this token")
	}
	first, err := agentwire.RecvTimeout(stream, agentwire.ReadyTimeout)
	if err != nil {
		e.failSub(ctx, s, event.SubAgentRefused, fmt.Sprintf("no AgentReady: %v", err))
		return status.Errorf(codes.DeadlineExceeded, "no AgentReady: %v", err)
	}
	ready := first.GetAgentReady()
	if ready == nil {
		msg := fmt.Sprintf("first sub-agent message was %T, not AgentReady; stream refused", first.GetEvent())
		e.Record(ctx, ledger.Sync, s.session, &event.AgentError{SubAgentID: s.id, Code: "protocol", Message: msg})
		e.failSub(ctx, s, event.SubAgentRefused, msg)
		return status.Error(codes.InvalidArgument, "the first message must be AgentReady")
	}
	canary, canaryErr := agentwire.ParseCanary(ready.SandboxCanaryJson)
	// Waits for spawnSubAgent to have recorded agent.spawned.
	s.mu.Lock()
	second := s.registered
	s.registered = true
	s.mu.Unlock()
	var refusal string
	switch {
	case second:
		refusal = "a second registration with the token of sub-agent " + s.id + " (a token is single-use); refused"
	case !auth.TokenEqual(ready.Token, s.token):
		refusal = "AgentReady carries another token than the stream's"
	case ready.AgentId != s.id:
		refusal = fmt.Sprintf("AgentReady names %q, but the token is sub-agent %s's", textclip.Cut(ready.AgentId, 64), s.id)
	case ready.ParentSessionId != s.session:
		refusal = fmt.Sprintf("AgentReady names parent session %q, but sub-agent %s belongs to %s", textclip.Cut(ready.ParentSessionId, 128), s.id, s.session)
	}
	if refusal != "" {
		if second {
			// Whoever holds the live token may open streams again and
			// again: each is a counted violation (a flood ends the
			// sub-agent), recorded without an fsync each.
			if e.countProtocolError(ctx, s) {
				e.Record(ctx, ledger.Async, s.session, &event.AgentReady{AgentID: s.id, SubAgentID: s.id, TokenValid: false, CanaryStatus: canary.Status})
				e.Record(ctx, ledger.Async, s.session, &event.AgentError{SubAgentID: s.id, Code: "protocol", Message: refusal})
			}
			return status.Error(codes.PermissionDenied, refusal)
		}
		e.Record(ctx, ledger.Sync, s.session, &event.AgentReady{AgentID: s.id, SubAgentID: s.id, TokenValid: false, CanaryStatus: canary.Status})
		e.Record(ctx, ledger.Sync, s.session, &event.AgentError{SubAgentID: s.id, Code: "protocol", Message: refusal})
		e.opts.Logf("engine: refused a sub-agent stream: %s", refusal)
		if !second {
			// Whatever holds the token is not the process the engine
			// started as it: that sub-agent cannot be trusted further.
			e.failSub(ctx, s, event.SubAgentRefused, refusal)
		}
		return status.Error(codes.PermissionDenied, refusal)
	}
	action, reason := e.JudgeCanary(canary, canaryErr)
	// Under the gate: a sub-agent that has ended (cancelled while its
	// process was starting, say) registers nothing after its end entry,
	// so verify --strict can demand that of every ledger.
	conn := engine.NewAgentConn(s.id, stream)
	s.gate.RLock()
	if s.ended {
		s.gate.RUnlock()
		return status.Error(codes.Aborted, "sub-agent "+s.id+" has ended")
	}
	e.Record(ctx, ledger.Async, s.session, &event.SandboxCanary{AgentID: s.id, SubAgentID: s.id, Result: canary, Action: action, Reason: reason})
	e.Record(ctx, ledger.Sync, s.session, &event.AgentReady{AgentID: s.id, SubAgentID: s.id, TokenValid: true, CanaryStatus: canary.Status})
	if action != "killed" {
		s.mu.Lock()
		s.conn, s.state = conn, subRunning
		s.mu.Unlock()
	}
	s.gate.RUnlock()
	if action == "killed" {
		e.opts.Logf("engine: REFUSED sub-agent %s: %s", s.id, reason)
		e.failSub(ctx, s, event.SubAgentRefused, reason)
		return status.Error(codes.PermissionDenied, reason)
	}
	if err := e.sendTurn(ctx, s, conn, s.task); err != nil {
		e.failSub(ctx, s, event.SubAgentCrashed, "its task could not be delivered: "+err.Error())
		return err
	}
	// Until the sub-agent ends its stream, or the engine has stopped its
	// sub-agents and ends it.
	done := make(chan struct{})
	defer close(done)
	events := agentwire.Events(stream, done)
	for {
		r := agentwire.Next(events, e.StreamsEnded())
		ev, err := r.Event, r.Err
		if errors.Is(err, io.EOF) || err != nil {
			// A stream gone while the sub-agent has not ended: its
			// process is killed; watchSubAgent records the crash.
			s.gate.RLock()
			ended := s.ended
			s.gate.RUnlock()
			if !ended {
				s.mu.Lock()
				killCmd(s.cmd)
				s.mu.Unlock()
			}
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		s.gate.RLock()
		ended := s.ended
		s.gate.RUnlock()
		if ended {
			// Its stream ends with it: what it sends after is not read.
			e.Record(ctx, ledger.Async, s.session, &event.AgentError{SubAgentID: s.id, Code: "protocol",
				Message: fmt.Sprintf("sub-agent %s sent %T after its end; its stream is closed", s.id, ev.Event)})
			return status.Errorf(codes.Aborted, "sub-agent %s has ended", s.id)
		}
		e.handleSubAgentEvent(ctx, s, conn, ev)
	}
}

// sendTurn records and sends a ProcessRequest for the sub-agent's next
// message (its task, then each follow-up): the granted tools only, the
// parent session's mode, and the turns before as history.
func (e *Manager) sendTurn(ctx context.Context, s *subAgent, conn *engine.AgentConn, content string) error {
	s.mu.Lock()
	n := len(s.turns) + 1
	msgID := fmt.Sprintf("%s_m%d", s.id, n)
	var history []*opxv1.ChatMessage
	for _, t := range s.turns {
		history = append(history, &opxv1.ChatMessage{Id: t.messageID, Role: "user", Content: t.content},
			&opxv1.ChatMessage{Role: "assistant", Content: t.answer})
	}
	s.turns = append(s.turns, subTurn{messageID: msgID, content: content})
	names := make([]string, 0, len(s.defs))
	for _, d := range s.defs {
		names = append(names, d.Name)
	}
	defs := agentwire.ProtoDefs(s.defs)
	s.mu.Unlock()
	return e.Send(ctx, conn, s.session, &event.ProcessRequest{SubAgentID: s.id, MessageID: msgID, Content: content, Mode: s.mode,
		History: len(history), Tools: names},
		&opxv1.EngineDirective{Directive: &opxv1.EngineDirective_ProcessRequest{ProcessRequest: &opxv1.ProcessRequest{
			SessionId: s.session, MessageId: msgID, Content: content, Mode: s.mode, History: history, Tools: defs}}})
}

// currentTurn returns the message id the sub-agent is working on.
func (s *subAgent) currentTurn() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.turns) == 0 {
		return ""
	}
	return s.turns[len(s.turns)-1].messageID
}

// handleSubAgentEvent records one event of a sub-agent and acts on it, as
// handleAgentEvent does for the main agent; an event about any message
// but the sub-agent's current one is recorded and refused.
func (e *Manager) handleSubAgentEvent(ctx context.Context, s *subAgent, conn *engine.AgentConn, ev *opxv1.AgentEvent) {
	cur := s.currentTurn()
	protocol := func(format string, args ...any) {
		e.subProtocolError(ctx, s, fmt.Sprintf(format, args...))
	}
	switch x := ev.Event.(type) {
	case *opxv1.AgentEvent_LlmToken:
		if x.LlmToken.MessageId != cur {
			protocol("tokens for message %q, which sub-agent %s is not working on; refused", textclip.Cut(x.LlmToken.MessageId, 128), s.id)
			return
		}
		if err := e.Recorder().Token(ctx, s.session, s.id, cur, x.LlmToken.Token); err != nil {
			e.Fatal(err)
		}
	case *opxv1.AgentEvent_ToolCall:
		tc := x.ToolCall
		// A call for another message, or with no call id or tool name,
		// is a violation: counted, so a flood of them ends the sub-agent
		// instead of growing the ledger.
		var refusal string
		switch {
		case tc.MessageId != cur:
			refusal = "error: sub-agent " + s.id + " is not working on message " + textclip.Cut(tc.MessageId, 128)
		case tc.CallId == "" || tc.ToolName == "":
			refusal = "error: a tool call needs a call id and a tool name"
		}
		if refusal != "" && !e.countProtocolError(ctx, s) {
			return
		}
		e.RecordFromSub(ctx, ledger.Async, s.session, s.id, &event.AgentToolCall{SubAgentID: s.id, MessageID: tc.MessageId, CallID: tc.CallId,
			Tool: tc.ToolName, Arguments: tc.ArgumentsJson})
		if refusal != "" {
			e.Reply(ctx, conn, s.session, s.id, tc.CallId, refusal, true)
			return
		}
		s.mu.Lock()
		s.toolCalls++
		t := &s.turns[len(s.turns)-1]
		t.toolCalls++
		over := t.toolCalls > e.opts.MaxToolCalls
		s.mu.Unlock()
		if over {
			e.Reply(ctx, conn, s.session, s.id, tc.CallId, fmt.Sprintf("error: more than %d tool calls for one message", e.opts.MaxToolCalls), true)
			return
		}
		go func() {
			out, err := e.Pipeline().Handle(context.WithoutCancel(ctx), s.session, s.id, cur, tc.CallId, tc.ToolName, tc.ArgumentsJson)
			if err != nil {
				e.Fatal(err)
				return
			}
			e.Reply(ctx, conn, s.session, s.id, tc.CallId, out.Content, out.IsError)
		}()
	case *opxv1.AgentEvent_ToolDefsRequest:
		// A sub-agent has no load_tools: it gets no tools this way, and
		// asking is a violation (counted: a flood ends it).
		if !e.countProtocolError(ctx, s) {
			return
		}
		r := x.ToolDefsRequest
		e.RecordFromSub(ctx, ledger.Async, s.session, s.id, &event.ToolDefsRequest{SubAgentID: s.id, CallID: r.CallId, Groups: agentwire.NonNil(r.Groups)})
		_ = e.Send(ctx, conn, s.session, &event.ToolDefs{SubAgentID: s.id, CallID: agentwire.NonEmpty(r.CallId), Groups: agentwire.NonNil(r.Groups), Tools: []string{}},
			&opxv1.EngineDirective{Directive: &opxv1.EngineDirective_ToolDefs{ToolDefs: &opxv1.ToolDefsDelivery{CallId: r.CallId}}})
	case *opxv1.AgentEvent_MemoryFlush:
		protocol("memory flush of %d bytes from sub-agent %s refused: sub-agents do not write memory", len(x.MemoryFlush.Content), s.id)
	case *opxv1.AgentEvent_ResponseComplete:
		rc := x.ResponseComplete
		p := agentwire.ResponseComplete(s.id, rc)
		if rc.MessageId != cur {
			// A violation: recorded (without an fsync) only while counted.
			if e.countProtocolError(ctx, s) {
				e.RecordFromSub(ctx, ledger.Async, s.session, s.id, p)
				e.Record(ctx, ledger.Async, s.session, &event.AgentError{SubAgentID: s.id, Code: "protocol",
					Message: fmt.Sprintf("an answer to message %q, which sub-agent %s is not working on; ignored", textclip.Cut(rc.MessageId, 128), s.id)})
			}
			return
		}
		e.RecordFromSub(ctx, ledger.Sync, s.session, s.id, p)
		s.gate.RLock()
		s.mu.Lock()
		s.turns[len(s.turns)-1].answer = rc.Content
		s.usage.InputTokens += p.Usage.InputTokens
		s.usage.OutputTokens += p.Usage.OutputTokens
		s.usage.TotalTokens += p.Usage.TotalTokens
		var next string
		if len(s.pending) > 0 && !s.ended {
			next, s.pending = s.pending[0], s.pending[1:]
		}
		s.mu.Unlock()
		s.gate.RUnlock()
		if next != "" {
			if err := e.sendTurn(ctx, s, conn, next); err != nil {
				e.failSub(ctx, s, event.SubAgentCrashed, "a follow-up could not be delivered: "+err.Error())
			}
			return
		}
		e.completeSub(ctx, s, rc.Content)
	case *opxv1.AgentEvent_Error:
		p := agentwire.AgentErrorPayload(s.id, x.Error)
		if x.Error.MessageId != cur {
			// About a message it is not working on: a violation.
			if e.countProtocolError(ctx, s) {
				e.Record(ctx, ledger.Async, s.session, p)
			}
			return
		}
		e.Record(ctx, ledger.Async, s.session, p)
		reason := event.SubAgentAgentError
		if p.Code == "max_rounds" {
			reason = event.SubAgentMaxRounds
		}
		e.failSub(ctx, s, reason, p.Code+": "+p.Message)
	default:
		protocol("unexpected sub-agent message %T", ev.Event)
	}
}

// maxProtocolErrors bounds what a sub-agent may send that it should not
// (events for other messages, memory flushes, unknown messages): the
// one over it ends the sub-agent, so a flood cannot grow the ledger.
const maxProtocolErrors = 16

// subProtocolError records a protocol violation of s and counts it.
func (e *Manager) subProtocolError(ctx context.Context, s *subAgent, msg string) {
	if e.countProtocolError(ctx, s) {
		e.Record(ctx, ledger.Async, s.session, &event.AgentError{SubAgentID: s.id, Code: "protocol", Message: textclip.Cut(msg, 1024)})
	}
}

// countProtocolError counts a violation of s; false once s is over
// maxProtocolErrors, which ends it (agent_error) and records no more.
func (e *Manager) countProtocolError(ctx context.Context, s *subAgent) bool {
	s.mu.Lock()
	s.protocolErrors++
	n := s.protocolErrors
	s.mu.Unlock()
	if n <= maxProtocolErrors {
		return true
	}
	if n == maxProtocolErrors+1 {
		e.failSub(ctx, s, event.SubAgentAgentError, fmt.Sprintf("more than %d protocol violations; stopped", maxProtocolErrors))
	}
	return false
}

// completeSub ends s with its answer: subagent.completed carries the
// result handed to the parent.
func (e *Manager) completeSub(ctx context.Context, s *subAgent, answer string) {
	s.mu.Lock()
	rounds, calls, usage := s.rounds, s.toolCalls, s.usage
	s.result = answer
	s.mu.Unlock()
	inline, h, blob := event.Inline(answer)
	p := &event.SubAgentCompleted{SubAgentID: s.id, Result: inline, ResultBlob: h, Size: int64(len(answer)), Rounds: rounds, ToolCalls: calls,
		Usage: usage, DurationMS: s.elapsed()}
	var blobs [][]byte
	if blob != nil {
		blobs = append(blobs, blob)
	}
	e.endSubAgent(ctx, s, p, subCompleted, "completed", blobs...)
}
