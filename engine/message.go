package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/opx-dev/opx/engine/agentwire"
	"github.com/opx-dev/opx/engine/auth"
	"github.com/opx-dev/opx/engine/otr"
	"github.com/opx-dev/opx/internal/textclip"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// MaxMessageBytes bounds a user message.
const MaxMessageBytes = 256 << 10

// agentWait bounds how long SendMessage waits for an agent to connect.
const agentWait = 30 * time.Second

// SendMessage records the message, hands it to the agent and streams the
// session's pipeline events until the agent answered it (or failed):
// ClientService.SendMessage (engine/grpcapi), and the rerun driver's
// recorded messages (engine/redrive).
func (e *Engine) SendMessage(req *opxv1.ClientMessageRequest, stream opxv1.ClientService_SendMessageServer) error {
	ctx := stream.Context()
	switch {
	case strings.TrimSpace(req.Content) == "":
		return status.Error(codes.InvalidArgument, "empty message")
	case len(req.Content) > MaxMessageBytes:
		return status.Errorf(codes.InvalidArgument, "message of %d bytes is over the %d byte limit", len(req.Content), MaxMessageBytes)
	case !utf8.ValidString(req.Content):
		return status.Error(codes.InvalidArgument, "message is not valid UTF-8")
	}
	mode := req.Mode
	if mode == "" {
		mode = "normal"
	}
	if mode != "normal" && mode != "otr" {
		return status.Errorf(codes.InvalidArgument, "mode %q is not normal or otr", textclip.Cut(mode, 32))
	}
	e.mu.Lock()
	refused := e.agentRefused
	e.mu.Unlock()
	if refused != "" {
		return status.Errorf(codes.FailedPrecondition, "the agent was refused: %s", refused)
	}
	agent, err := e.waitAgent(ctx, agentWait)
	if err != nil {
		return status.Errorf(codes.Unavailable, "%v", err)
	}

	sessionID := req.SessionId
	newSession := sessionID == ""
	var history []*opxv1.ChatMessage
	if newSession {
		tok, err := auth.NewToken()
		if err != nil {
			return err
		}
		sessionID = "ses_" + tok[:16]
	} else {
		s, ok, err := e.readSession(ctx, sessionID)
		switch {
		case err != nil:
			return status.Errorf(codes.Internal, "sessions: %v", err)
		case !ok:
			return status.Errorf(codes.NotFound, "no session %q", textclip.Cut(sessionID, 128))
		}
		// A session's mode is fixed when it is created: a message that
		// asks for another one is refused rather than recorded in a mode
		// its sender did not expect.
		if req.Mode != "" && req.Mode != s.Mode {
			return status.Errorf(codes.FailedPrecondition, "session %s is %s, not %s: a session's mode is fixed when it is created; start a new session instead",
				textclip.Cut(sessionID, 128), modeName(s.Mode), modeName(mode))
		}
		mode = s.Mode
		if mode == otr.Mode {
			// The history projection holds only commitments: the
			// conversation is in this engine's memory, or gone.
			history, err = e.rec.otr.Conversation(sessionID)
			if errors.Is(err, otr.ErrGone) {
				return status.Errorf(codes.FailedPrecondition, "session %s is off the record and cannot be continued: %v", textclip.Cut(sessionID, 128), err)
			}
		} else {
			history, err = e.readHistory(sessionID, 0, 0)
		}
		if err != nil {
			return status.Errorf(codes.Internal, "history: %v", err)
		}
	}
	tok, err := auth.NewToken()
	if err != nil {
		return err
	}
	msgID := "msg_" + tok[:16]
	if req.MessageId != "" {
		msgID = textclip.Cut(req.MessageId, 128)
	}
	sub := e.bc.Subscribe(sessionID)
	defer sub.Close()

	f := &inflight{session: sessionID, messageID: msgID, done: make(chan struct{})}
	e.mu.Lock()
	if e.inflight[msgID] != nil {
		e.mu.Unlock()
		return status.Errorf(codes.AlreadyExists, "message %q is already in flight", msgID)
	}
	e.inflight[msgID] = f
	e.mu.Unlock()
	if mode != otr.Mode {
		e.rec.otr.Normal(sessionID)
	}
	if newSession && mode == otr.Mode {
		// Before anything of the session is recorded: every entry of it
		// is withheld under its key.
		if err := e.rec.otr.Start(sessionID); err != nil {
			e.mu.Lock()
			delete(e.inflight, msgID)
			e.mu.Unlock()
			return status.Errorf(codes.Internal, "%v", err)
		}
	}
	if newSession {
		title := titleOf(req.Content)
		seq := e.record(ctx, ledger.Async, sessionID, &event.SessionCreated{Mode: mode, Title: title})
		e.publish(sessionID, msgID, "session_created", seq, map[string]string{"session_id": sessionID, "title": title})
	}

	tp := traceparent(ctx)
	seq := e.record(ctx, ledger.Async, sessionID, &event.ClientMessage{MessageID: msgID, Content: req.Content, Client: clientName(ctx),
		Traceparent: tp})
	e.mu.Lock()
	f.turnSeq, f.traceparent = seq, tp
	e.mu.Unlock()
	e.publish(sessionID, msgID, "message", seq, map[string]string{"content": req.Content})
	// The agent is offered the MCP servers' tools once each server has
	// started (or failed) once: the first message after a start waits
	// for them, bounded.
	if e.mcp != nil {
		if err := e.opts.MCP.WaitStarted(ctx, e.mcp); err != nil {
			e.opts.Logf("engine: MCP servers not all started: %v", err)
		}
	}
	defs, _ := e.tools.Group(e.tools.Groups()...)
	names := make([]string, 0, len(defs))
	for _, d := range defs {
		names = append(names, d.Name)
	}
	err = agent.send(ctx, e, sessionID, &event.ProcessRequest{MessageID: msgID, Content: req.Content, Mode: mode, History: len(history), Tools: names},
		&opxv1.EngineDirective{Directive: &opxv1.EngineDirective_ProcessRequest{ProcessRequest: &opxv1.ProcessRequest{
			SessionId: sessionID, MessageId: msgID, Content: req.Content, Mode: mode, History: history, Tools: agentwire.ProtoDefs(defs)}}})
	if err != nil {
		e.mu.Lock()
		delete(e.inflight, msgID)
		e.mu.Unlock()
		e.rec.otr.Ended(msgID)
		return status.Errorf(codes.Unavailable, "deliver the message to the agent: %v", err)
	}
	for {
		select {
		case ev, ok := <-sub.C:
			if !ok {
				if e.bc.Broken() {
					return status.Error(codes.Unavailable, "the ledger failed: nothing more is recorded (see the engine's log)")
				}
				return status.Error(codes.ResourceExhausted, "client fell too far behind; read the rest from the ledger")
			}
			if err := stream.Send(ev); err != nil {
				return err
			}
			if ev.MessageId == msgID && (ev.Type == "response_complete" || ev.Type == "error") {
				return nil
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// modeName names a session mode for a person.
func modeName(mode string) string {
	if mode == otr.Mode {
		return "off the record"
	}
	return textclip.Cut(mode, 32)
}

// titleOf makes a session title from its first message.
func titleOf(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= 60 {
		return s
	}
	r := []rune(s)
	return string(r[:57]) + "..."
}

// traceparent is the W3C trace context the client sent (metadata
// "traceparent", as opx send passes its TRACEPARENT), "" when none or
// not a valid one: the turn's span is its child in the telemetry
// exported (telemetry/).
func traceparent(ctx context.Context) string {
	if v := auth.MetadataValue(ctx, "traceparent"); event.ValidTraceparent(v) {
		return v
	}
	return ""
}

// clientName is what a client calls itself (metadata "opx-client").
func clientName(ctx context.Context) string {
	if v := auth.MetadataValue(ctx, "opx-client"); v != "" {
		return textclip.Cut(v, 64)
	}
	return "grpc"
}

// Status reports the processes, the sandbox and the ledger head
// (ClientService.GetStatus).
func (e *Engine) Status() (*opxv1.StatusResponse, error) {
	h, err := durableHead(e.opts.Ledger)
	if err != nil {
		return nil, fmt.Errorf("ledger head: %w", err)
	}
	servers := e.opts.MCP.StatusProto(e.mcp)
	fleet := e.out.FleetStatus()
	witnesses := e.out.WitnessStatus()
	telemetry := e.out.TelemetryStatus()
	e.mu.Lock()
	defer e.mu.Unlock()
	st := &opxv1.StatusResponse{Version: e.opts.Version, Workspace: e.opts.Workspace, ManagerPid: int64(e.opts.ManagerPID),
		EnginePid: int64(pid), AgentPid: int64(e.agentPID), GrpcPort: int64(e.port),
		LedgerHeadSeq: h.Seq, LedgerHeadHash: h.Hash.String(), LedgerPath: e.opts.Ledger.Path(), SandboxStatus: "no agent",
		McpServers: servers, Fleet: fleet, Witnesses: witnesses, Telemetry: telemetry}
	if k := e.opts.Checkpoints; k != nil {
		if v, ok := k.Verifier(); ok {
			st.CheckpointOrigin, st.CheckpointKey = k.Origin(), v.String()
		}
	}
	switch {
	case e.agentRefused != "":
		st.SandboxStatus, st.SandboxSummary = e.canary.Status, "agent refused: "+e.agentRefused
	case e.canary != nil && e.agent != nil:
		st.SandboxStatus, st.SandboxSummary = e.canary.Status, e.canary.Summary
	}
	return st, nil
}

// RequestStop stops the engine for a client, after its reply is on its
// way: cleanly (exit 0), or asking its manager for a restart (exit 75)
// when restart is set; reason is what the client said.
func (e *Engine) RequestStop(restart bool, reason string) {
	cause := errShutdown
	if restart {
		cause = ErrRestart
	}
	e.requestStop(cause, reason)
}

func (e *Engine) requestStop(cause error, reason string) {
	e.opts.Logf("engine: %v (%s)", cause, textclip.Cut(reason, 200))
	e.mu.Lock()
	stop := e.stop
	if reason = strings.TrimSpace(textclip.Cut(reason, 200)); reason != "" {
		e.stopReason = reason
	}
	e.mu.Unlock()
	if stop != nil {
		// After the reply is on its way.
		go func() { time.Sleep(50 * time.Millisecond); stop(cause) }()
	}
}
