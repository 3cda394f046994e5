package gateway

import (
	"context"

	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/engine/agentwire"
	"github.com/opx-dev/opx/engine/auth"
	"github.com/opx-dev/opx/engine/llm"
	"github.com/opx-dev/opx/internal/textclip"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Engine is what the gateway uses of the engine (*engine.Engine).
type Engine interface {
	// SubAgentByToken is the live sub-agent whose token tok is, or nil.
	SubAgentByToken(tok string) engine.SubAgent
	// AgentToken is the token of the agent last spawned.
	AgentToken() string
	// MessageSession is the session of the message id in flight.
	MessageSession(id string) (session string, ok bool)
	// NextRequestID names the next model request.
	NextRequestID() string
	// Model is the provider the agents' model calls go to and its retry
	// policy (Options.Provider, Options.Retry).
	Model() (llm.Provider, llm.RetryPolicy)
	// Record records p, and stops the engine if the ledger failed.
	Record(ctx context.Context, d ledger.Durability, session string, p event.Payload, blobs ...[]byte) uint64
}

// gateway serves LLMGateway.Complete: the agent's only way to a model. The
// engine records the exact request body before the call and the raw
// response after it, and streams the parsed chunks to the agent as they
// arrive.
type gateway struct {
	opxv1.UnimplementedLLMGatewayServer
	e Engine
}

// NewService serves LLMGateway for e.
func NewService(e Engine) opxv1.LLMGatewayServer { return &gateway{e: e} }

// Complete makes one model call of sub-agent s for session, recording
// the request before and the response after (engine/subagent, once it
// has admitted the call).
func Complete(e Engine, s engine.SubAgent, session string, req *opxv1.LLMRequest, stream opxv1.LLMGateway_CompleteServer) error {
	return (&gateway{e: e}).complete(s, session, req, stream)
}

// Complete serves a model call for a message in flight; a call for any
// other message is refused, so only the agent working on a message can
// spend model calls, and every call belongs to a recorded message.
func (g *gateway) Complete(req *opxv1.LLMRequest, stream opxv1.LLMGateway_CompleteServer) error {
	e := g.e
	ctx := stream.Context()
	tok := auth.MetadataValue(ctx, opxv1.AgentTokenHeader)
	if s := e.SubAgentByToken(tok); s != nil {
		return s.Complete(req, stream)
	}
	// Not a live sub-agent's token: served only if it is the session
	// agent's. The authenticator let the call in when its headers came;
	// the request is read after, so a sub-agent that ended since (or an
	// agent replaced since) holds a token that is no one's any more, and
	// its call must not fall through to the session agent's path.
	if !auth.TokenEqual(tok, e.AgentToken()) {
		return status.Error(codes.Unauthenticated, "the token is no live agent's or sub-agent's any more; refused")
	}
	session, ok := e.MessageSession(req.MessageId)
	if !ok || session != req.SessionId {
		return status.Errorf(codes.PermissionDenied, "no message %q in flight in session %q", textclip.Cut(req.MessageId, 128), textclip.Cut(req.SessionId, 128))
	}
	return g.complete(nil, session, req, stream)
}

// complete makes one model call for session (for sub-agent s, nil for
// the session's agent, with its model if it asked for one), recording
// the request before and the response after.
func (g *gateway) complete(s engine.SubAgent, session string, req *opxv1.LLMRequest, stream opxv1.LLMGateway_CompleteServer) error {
	e := g.e
	ctx := stream.Context()
	subagent, model := "", ""
	if s != nil {
		subagent, model = s.ID(), s.Model()
	}
	p, retry := e.Model()
	if model == "" {
		model = p.Model()
	}
	lreq := &llm.Request{Model: model, MaxTokens: req.MaxTokens}
	for _, m := range req.Messages {
		msg := llm.Message{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallId}
		for _, tc := range m.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, llm.ToolCall{ID: tc.CallId, Name: tc.ToolName, Arguments: tc.ArgumentsJson})
		}
		lreq.Messages = append(lreq.Messages, msg)
	}
	for _, t := range req.Tools {
		lreq.Tools = append(lreq.Tools, llm.Tool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema})
	}
	body, err := p.Encode(lreq)
	if err != nil {
		return status.Errorf(codes.InvalidArgument, "encode the model request: %v", err)
	}
	reqID := e.NextRequestID()
	release := func() {}
	if s != nil {
		// Under the gate: no model call of a sub-agent starts after its
		// end entry.
		var ok bool
		if release, ok = s.Hold(); !ok {
			return status.Errorf(codes.Aborted, "sub-agent %s has ended", s.ID())
		}
	}
	e.Record(ctx, ledger.Async, session, &event.LLMRequest{SubAgentID: subagent, RequestID: reqID, MessageID: req.MessageId, Provider: p.Name(),
		Model: model, Blob: ledger.Sum(body).String(), Size: int64(len(body))}, body)
	release()

	callCtx := context.WithoutCancel(ctx) // finish (and record) the call even if the agent goes away
	if s != nil {
		// But not past the sub-agent's end: nothing of it runs after.
		var stop context.CancelCauseFunc
		callCtx, stop = context.WithCancelCause(callCtx)
		defer stop(nil)
		defer context.AfterFunc(s.Stopped(), func() { stop(context.Cause(s.Stopped())) })()
	}
	x, callErr := llm.Complete(callCtx, p, lreq, retry, func(c llm.Chunk) error {
		var out *opxv1.LLMChunk
		switch {
		case c.Text != "":
			out = &opxv1.LLMChunk{Chunk: &opxv1.LLMChunk_Text{Text: c.Text}}
		case c.ToolCall != nil:
			out = &opxv1.LLMChunk{Chunk: &opxv1.LLMChunk_ToolCall{ToolCall: &opxv1.ToolCall{CallId: c.ToolCall.ID, ToolName: c.ToolCall.Name, ArgumentsJson: c.ToolCall.Arguments}}}
		case c.Done != nil:
			u := c.Done.Usage
			out = &opxv1.LLMChunk{Chunk: &opxv1.LLMChunk_Done{Done: &opxv1.LLMDone{FinishReason: c.Done.FinishReason, Model: c.Done.Model,
				Usage: &opxv1.TokenUsage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, TotalTokens: u.InputTokens + u.OutputTokens}}}}
		default:
			return nil
		}
		if ctx.Err() != nil {
			return nil // the agent left; keep reading so the record is whole
		}
		return stream.Send(out)
	})
	r, blobs := agentwire.LLMResponse(p, subagent, reqID, x, callErr)
	if model != p.Model() {
		r.Model = model
	}
	e.Record(ctx, ledger.Async, session, r, blobs...)
	if callErr != nil {
		return status.Errorf(codes.Unavailable, "model call failed: %v", callErr)
	}
	return nil
}
