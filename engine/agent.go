package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"time"

	"github.com/opx-dev/opx/engine/agentwire"
	"github.com/opx-dev/opx/engine/auth"
	"github.com/opx-dev/opx/engine/broadcast"
	"github.com/opx-dev/opx/engine/supervise"
	"github.com/opx-dev/opx/internal/textclip"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// agentService serves AgentService.RunSession: the one stream between the
// engine and its sandboxed agent.
type agentService struct {
	opxv1.UnimplementedAgentServiceServer
	e *Engine
}

// agentConn is an accepted agent stream. Sends are serialized, and each
// directive is recorded before it is sent, under the same lock, so the
// ledger holds directives in the order the agent receives them.
type agentConn struct {
	id     string
	stream agentwire.Stream
	mu     sync.Mutex
}

func (a *agentConn) send(ctx context.Context, e *Engine, session string, p event.Payload, d *opxv1.EngineDirective, blobs ...[]byte) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, err := e.rec.Record(context.WithoutCancel(ctx), ledger.Async, session, p, blobs...); err != nil {
		e.fatal(err)
		return err
	}
	return a.stream.Send(d)
}

// RunSession authenticates the agent by the token in its first message,
// records its canary, and then records and handles every event it sends.
func (s *agentService) RunSession(stream opxv1.AgentService_RunSessionServer) error {
	e := s.e
	ctx := stream.Context()
	first, err := agentwire.RecvTimeout(stream, agentwire.ReadyTimeout)
	if err != nil {
		return status.Errorf(codes.DeadlineExceeded, "no AgentReady: %v", err)
	}
	ready := first.GetAgentReady()
	if ready == nil {
		e.record(ctx, ledger.Sync, "", &event.AgentError{Code: "protocol", Message: fmt.Sprintf("first agent message was %T, not AgentReady; stream refused", first.GetEvent())})
		return status.Error(codes.InvalidArgument, "the first message must be AgentReady")
	}
	agentID := textclip.Cut(ready.AgentId, 64)
	if agentID == "" {
		agentID = "unnamed"
	}
	e.mu.Lock()
	want := e.agentToken
	e.mu.Unlock()
	canary, canaryErr := agentwire.ParseCanary(ready.SandboxCanaryJson)
	if !auth.TokenEqual(ready.Token, want) {
		e.record(ctx, ledger.Sync, "", &event.AgentReady{AgentID: agentID, TokenValid: false, CanaryStatus: canary.Status})
		e.opts.Logf("engine: rejected an agent stream with a wrong token")
		return status.Error(codes.PermissionDenied, "wrong agent token")
	}
	action, reason := e.judgeCanary(canary, canaryErr)
	if action == "killed" {
		// Decided before anything is recorded, so the supervisor sees the
		// refusal when this agent exits and does not start another.
		e.mu.Lock()
		e.agentRefused, e.canary = reason, &canary
		e.mu.Unlock()
		e.opts.Logf("engine: REFUSED the agent: %s", reason)
	}
	e.record(ctx, ledger.Async, "", &event.SandboxCanary{AgentID: agentID, Result: canary, Action: action, Reason: reason})
	e.record(ctx, ledger.Sync, "", &event.AgentReady{AgentID: agentID, TokenValid: true, CanaryStatus: canary.Status})
	if action == "killed" {
		return status.Error(codes.PermissionDenied, reason)
	}

	conn := &agentConn{id: agentID, stream: stream}
	e.mu.Lock()
	if e.agent != nil {
		e.mu.Unlock()
		e.record(ctx, ledger.Sync, "", &event.AgentError{Code: "protocol", Message: "a second agent stream while one is connected; refused"})
		return status.Error(codes.AlreadyExists, "an agent is already connected")
	}
	e.agent, e.canary = conn, &canary
	close(e.agentReady)
	e.mu.Unlock()
	defer e.disconnect(conn)

	// Until the agent ends its stream, or the engine has stopped its
	// agent and ends it (Run, before the server's graceful stop).
	done := make(chan struct{})
	defer close(done)
	events := agentwire.Events(stream, done)
	for {
		r := agentwire.Next(events, e.streamsEnded)
		if errors.Is(r.Err, io.EOF) {
			return nil
		}
		if r.Err != nil {
			return r.Err
		}
		e.handleAgentEvent(ctx, conn, r.Event)
	}
}

// callStarted and callDone count the agent's tool calls under way: a
// stopping engine delivers their results before it ends the agent's
// stream (awaitCalls).
func (e *Engine) callStarted() {
	e.mu.Lock()
	e.agentCalls++
	e.mu.Unlock()
}

func (e *Engine) callDone() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.agentCalls--; e.agentCalls == 0 && e.callsIdle != nil {
		close(e.callsIdle)
		e.callsIdle = nil
	}
}

// awaitCalls waits, up to d, until no tool call of the agent is under
// way.
func (e *Engine) awaitCalls(d time.Duration) {
	e.mu.Lock()
	if e.agentCalls == 0 {
		e.mu.Unlock()
		return
	}
	idle := make(chan struct{})
	e.callsIdle = idle
	e.mu.Unlock()
	select {
	case <-idle:
	case <-time.After(d):
	}
}

// judgeCanary decides what becomes of an agent or sub-agent from its
// canary: accepted when its sandbox holds, warned when this system has
// none (and none is required), killed otherwise, with the reason.
func (e *Engine) judgeCanary(canary event.Canary, canaryErr error) (action, reason string) {
	switch {
	case canaryErr != nil:
		return "killed", canaryErr.Error()
	case canary.Status == event.CanarySandboxed:
		return "accepted", ""
	case canary.Status == event.CanaryUnavailable && e.opts.RequireSandbox:
		return "killed", "no sandbox on this system, and the sandbox is required"
	case canary.Status == event.CanaryUnavailable:
		e.opts.Logf("engine: WARNING: the agent is NOT sandboxed (%s)", canary.Summary)
		return "warned", "no sandbox on this system: the agent runs unconfined"
	}
	return "killed", "canary status " + canary.Status + ": the sandbox does not hold (" + canary.Summary + ")"
}

// disconnect forgets conn if it is still the connected agent.
func (e *Engine) disconnect(conn *agentConn) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.agent == conn {
		e.agent = nil
		e.agentReady = make(chan struct{})
	}
}

// recordFromAgent records a payload built from the agent's input. A
// payload the agent made invalid (an empty call id, say) is recorded as an
// agent.error describing it instead, so hostile input is on record but
// cannot stop the engine.
func (e *Engine) recordFromAgent(ctx context.Context, d ledger.Durability, session string, p event.Payload, blobs ...[]byte) uint64 {
	return e.recordFromSub(ctx, d, session, "", p, blobs...)
}

// recordFromSub is recordFromAgent for the agent or sub-agent subagent.
func (e *Engine) recordFromSub(ctx context.Context, d ledger.Durability, session, subagent string, p event.Payload, blobs ...[]byte) uint64 {
	if err := p.Validate(); err != nil {
		return e.record(ctx, d, session, &event.AgentError{SubAgentID: subagent, Code: "malformed_event", Message: textclip.Cut(fmt.Sprintf("%s from the agent refused: %v", p.Type(), err), 1024)})
	}
	return e.record(ctx, d, session, p, blobs...)
}

// handleAgentEvent records one event and acts on it.
func (e *Engine) handleAgentEvent(ctx context.Context, conn *agentConn, ev *opxv1.AgentEvent) {
	switch x := ev.Event.(type) {
	case *opxv1.AgentEvent_LlmToken:
		f, session := e.messageSession(x.LlmToken.MessageId)
		if err := e.rec.Token(ctx, session, "", textclip.Cut(x.LlmToken.MessageId, 128), x.LlmToken.Token); err != nil {
			e.fatal(err)
			return
		}
		if f != nil {
			e.publish(session, f.messageID, broadcast.TypeToken, 0, map[string]string{"text": x.LlmToken.Token})
		}
	case *opxv1.AgentEvent_ToolCall:
		tc := x.ToolCall
		f := e.message(tc.MessageId)
		if f == nil {
			e.recordFromAgent(ctx, ledger.Async, "", &event.AgentToolCall{MessageID: tc.MessageId, CallID: tc.CallId, Tool: tc.ToolName, Arguments: tc.ArgumentsJson})
			e.reply(ctx, conn, "", "", tc.CallId, "error: no message in flight with id "+textclip.Cut(tc.MessageId, 128), true)
			return
		}
		seq := e.recordFromAgent(ctx, ledger.Async, f.session, &event.AgentToolCall{MessageID: tc.MessageId, CallID: tc.CallId, Tool: tc.ToolName, Arguments: tc.ArgumentsJson})
		// Counted before the call's own checks: malformed calls use up
		// the message's max_tool_calls_per_message too, so they cannot
		// flood the ledger.
		e.mu.Lock()
		f.toolCalls++
		over := f.toolCalls > e.opts.MaxToolCalls
		e.mu.Unlock()
		if tc.CallId == "" || tc.ToolName == "" {
			e.reply(ctx, conn, f.session, "", tc.CallId, "error: a tool call needs a call id and a tool name", true)
			return
		}
		if over {
			e.reply(ctx, conn, f.session, "", tc.CallId, fmt.Sprintf("error: more than %d tool calls for one message", e.opts.MaxToolCalls), true)
			return
		}
		e.publish(f.session, f.messageID, "tool_call", seq, map[string]string{"call_id": tc.CallId, "tool": tc.ToolName, "arguments": textclip.Cut(tc.ArgumentsJson, 4096)})
		e.callStarted()
		go func() {
			defer e.callDone()
			// Once proposed, a call goes through the pipeline to its recorded
			// end even if the agent disconnects meanwhile: a half-recorded
			// call would be worse evidence than a result nobody received.
			out, err := e.pipe.Handle(context.WithoutCancel(ctx), f.session, "", f.messageID, tc.CallId, tc.ToolName, tc.ArgumentsJson)
			if err != nil {
				e.fatal(err)
				return
			}
			e.reply(ctx, conn, f.session, "", tc.CallId, out.Content, out.IsError)
			e.publish(f.session, f.messageID, "tool_result", 0, map[string]any{"call_id": tc.CallId, "is_error": out.IsError, "content": textclip.Cut(out.Content, 4096)})
		}()
	case *opxv1.AgentEvent_ToolDefsRequest:
		r := x.ToolDefsRequest
		e.recordFromAgent(ctx, ledger.Async, "", &event.ToolDefsRequest{CallID: r.CallId, Groups: agentwire.NonNil(r.Groups)})
		defs, _ := e.tools.Group(r.Groups...)
		names := make([]string, 0, len(defs))
		for _, d := range defs {
			names = append(names, d.Name)
		}
		_ = conn.send(ctx, e, "", &event.ToolDefs{CallID: agentwire.NonEmpty(r.CallId), Groups: agentwire.NonNil(r.Groups), Tools: names},
			&opxv1.EngineDirective{Directive: &opxv1.EngineDirective_ToolDefs{ToolDefs: &opxv1.ToolDefsDelivery{CallId: r.CallId, Tools: agentwire.ProtoDefs(defs)}}})
	case *opxv1.AgentEvent_MemoryFlush:
		content, h, blob := event.Inline(x.MemoryFlush.Content)
		var blobs [][]byte
		if blob != nil {
			blobs = append(blobs, blob)
		}
		e.recordFromAgent(ctx, ledger.Async, "", &event.MemoryFlush{Content: content, Blob: h, Size: int64(len(x.MemoryFlush.Content))}, blobs...)
	case *opxv1.AgentEvent_ResponseComplete:
		rc := x.ResponseComplete
		f, session := e.messageSession(rc.MessageId)
		p := agentwire.ResponseComplete("", rc)
		seq := e.recordFromAgent(ctx, ledger.Sync, session, p)
		if f == nil {
			return
		}
		e.mu.Lock()
		delete(e.inflight, f.messageID)
		e.mu.Unlock()
		e.publish(session, f.messageID, "response_complete", seq, map[string]any{"content": rc.Content, "usage": p.Usage})
		f.finish()
	case *opxv1.AgentEvent_Error:
		ae := x.Error
		f, session := e.messageSession(ae.MessageId)
		p := agentwire.AgentErrorPayload("", ae)
		code, msg := p.Code, p.Message
		seq := e.record(ctx, ledger.Async, session, p)
		if f != nil {
			e.mu.Lock()
			delete(e.inflight, f.messageID)
			e.mu.Unlock()
			e.publish(session, f.messageID, "error", seq, map[string]string{"code": code, "message": msg})
			f.finish()
		}
	default:
		e.record(ctx, ledger.Async, "", &event.AgentError{Code: "protocol", Message: fmt.Sprintf("unexpected agent message %T", ev.Event)})
	}
}

// reply records and sends a tool result.
func (e *Engine) reply(ctx context.Context, conn *agentConn, session, subagent, callID, content string, isError bool) {
	inline, h, blob := event.Inline(content)
	p := &event.ToolResult{SubAgentID: subagent, CallID: agentwire.NonEmpty(callID), Content: inline, Blob: h, Size: int64(len(content)), IsError: isError}
	d := &opxv1.EngineDirective{Directive: &opxv1.EngineDirective_ToolResult{ToolResult: &opxv1.ToolResultDelivery{CallId: callID, Content: content, IsError: isError}}}
	var blobs [][]byte
	if blob != nil {
		blobs = append(blobs, blob)
	}
	if err := conn.send(ctx, e, session, p, d, blobs...); err != nil {
		e.opts.Logf("engine: deliver tool result %s: %v", callID, err)
	}
}

// superviseAgent spawns the agent with a fresh token each time and
// restarts it within its own crash budget, recording each step.
func (e *Engine) superviseAgent(ctx context.Context) error {
	restarts := 0
	spawn := func(ctx context.Context) (*exec.Cmd, error) {
		tok, err := auth.NewToken()
		if err != nil {
			return nil, err
		}
		e.mu.Lock()
		e.agentToken = tok
		e.mu.Unlock()
		e.mu.Lock()
		refused := e.agentRefused
		e.mu.Unlock()
		if refused != "" {
			return nil, fmt.Errorf("%w: %s", errAgentRefused, refused)
		}
		cmd, err := e.opts.SpawnAgent(ctx, AgentLaunch{Addr: fmt.Sprintf("127.0.0.1:%d", e.port), Token: tok, Canary: e.canaryTargets})
		if err != nil {
			return nil, err
		}
		// Recorded here rather than on the Started event, so it precedes
		// anything the new agent sends.
		e.record(ctx, ledger.Async, "", &event.AgentSpawned{AgentID: fmt.Sprintf("agent-%d", restarts+1), PID: cmd.Process.Pid, Restart: restarts,
			Sandbox: e.agentSandbox()})
		return cmd, nil
	}
	err := supervise.Run(ctx, e.opts.AgentPolicy, spawn, func(ev supervise.Event) {
		agentID := fmt.Sprintf("agent-%d", restarts+1)
		switch ev.Kind {
		case supervise.Started:
			e.mu.Lock()
			e.agentPID = ev.Pid
			e.mu.Unlock()
		case supervise.Stopped, supervise.Restarted:
			e.agentGone()
			e.record(ctx, ledger.Async, "", &event.AgentExited{AgentID: agentID, PID: ev.Pid, ExitCode: ev.ExitCode, Reason: string(ev.Kind)})
			restarts++
		case supervise.Crashed, supervise.GaveUp:
			e.agentGone()
			detail := fmt.Sprintf("agent exited with status %d", ev.ExitCode)
			if ev.Signal != "" {
				detail = "agent killed by signal " + ev.Signal
			}
			if ev.Kind == supervise.GaveUp {
				detail += fmt.Sprintf("; %d crashes in the window, not respawning", ev.Crashes)
			}
			e.mu.Lock()
			refused := e.agentRefused
			e.mu.Unlock()
			if refused != "" {
				detail += "; not respawned: " + refused
			}
			e.record(ctx, ledger.Sync, "", &event.AgentCrashed{AgentID: agentID, PID: ev.Pid, ExitCode: ev.ExitCode, Signal: ev.Signal,
				Detail: detail, Respawn: ev.Kind == supervise.Crashed && refused == ""})
			e.failInflight("agent crashed: " + detail)
			restarts++
		}
	})
	if errors.Is(err, context.Canceled) || errors.Is(ctx.Err(), context.Canceled) {
		return nil
	}
	return err
}

// agentSandbox is the sandbox an agent or sub-agent is started under:
// what `opx internal-agent` applies to itself on this kernel (Landlock at
// its ABI with no path granted, seccomp on every thread, TCP connect to
// the engine's port only), or none where the kernel has no sandbox. The
// agent's canary then says whether it holds.
func (e *Engine) agentSandbox() event.SandboxConfig {
	c := event.SandboxConfig{Mechanism: "none", ReadPaths: []string{}, WritePaths: []string{}, ConnectPort: e.port}
	if caps := e.sandboxCaps; caps.Filesystem && caps.Seccomp {
		c.Mechanism, c.LandlockABI, c.Seccomp = caps.Mechanism, caps.LandlockABI, true
	}
	return c
}

// errAgentRefused ends agent supervision after an agent was killed for its
// sandbox.
var errAgentRefused = errors.New("agent refused")

// agentGone forgets the connected agent.
func (e *Engine) agentGone() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.agent != nil {
		e.agent = nil
		e.agentReady = make(chan struct{})
	}
	e.agentPID = 0
}

// waitAgent returns the connected agent, waiting up to d for one.
func (e *Engine) waitAgent(ctx context.Context, d time.Duration) (*agentConn, error) {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		e.mu.Lock()
		a, ready := e.agent, e.agentReady
		e.mu.Unlock()
		if a != nil {
			return a, nil
		}
		select {
		case <-ready:
		case <-t.C:
			return nil, errors.New("no agent connected")
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// shutdownAgent asks the connected agent to stop.
func (e *Engine) shutdownAgent(reason string) {
	e.mu.Lock()
	a := e.agent
	e.mu.Unlock()
	if a != nil {
		_ = a.send(context.Background(), e, "", &event.Shutdown{Reason: reason},
			&opxv1.EngineDirective{Directive: &opxv1.EngineDirective_Shutdown{Shutdown: &opxv1.ShutdownDirective{Reason: reason}}})
	}
}
