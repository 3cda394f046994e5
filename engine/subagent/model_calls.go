package subagent

import (
	"fmt"

	"github.com/opx-dev/opx/engine/gateway"
	"github.com/opx-dev/opx/internal/textclip"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Complete implements engine.SubAgent: the gateway hands it the model
// calls made with s's token. It serves them only for the message s is
// working on, and only within its rounds (agents.max_rounds); the call
// over the limit is refused, recorded, and ends s (failed max_rounds).
// The call itself is the gateway's (gateway.Complete).
func (s *subAgent) Complete(req *opxv1.LLMRequest, stream opxv1.LLMGateway_CompleteServer) error {
	e := s.m
	ctx := stream.Context()
	cur := s.currentTurn()
	if req.MessageId != cur || req.SessionId != s.session {
		msg := fmt.Sprintf("model call of sub-agent %s for message %q in session %q, but it works on %q in %q; refused", s.id,
			textclip.Cut(req.MessageId, 128), textclip.Cut(req.SessionId, 128), cur, s.session)
		// Counted like the stream's violations: a flood ends it.
		e.subProtocolError(ctx, s, msg)
		return status.Error(codes.PermissionDenied, msg)
	}
	s.gate.RLock()
	ended := s.ended
	s.mu.Lock()
	over := !ended && s.rounds >= s.maxRounds
	if !ended && !over {
		s.rounds++
	}
	s.mu.Unlock()
	s.gate.RUnlock()
	switch {
	case ended:
		return status.Errorf(codes.Aborted, "sub-agent %s has ended", s.id)
	case over:
		msg := fmt.Sprintf("model call %d of sub-agent %s refused: agents.max_rounds is %d", s.maxRounds+1, s.id, s.maxRounds)
		e.Record(ctx, ledger.Async, s.session, &event.AgentError{SubAgentID: s.id, MessageID: cur, Code: "max_rounds", Message: msg})
		e.failSub(ctx, s, event.SubAgentMaxRounds, msg)
		return status.Error(codes.ResourceExhausted, msg)
	}
	return gateway.Complete(e.Engine, s, s.session, req, stream)
}
