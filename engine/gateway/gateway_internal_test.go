package gateway

import (
	"context"
	"testing"

	"github.com/opx-dev/opx/engine"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// fakeCompleteStream is a Complete stream whose context carries a token.
type fakeCompleteStream struct {
	grpc.ServerStream
	ctx  context.Context
	sent int
}

func (f *fakeCompleteStream) Context() context.Context   { return f.ctx }
func (f *fakeCompleteStream) Send(*opxv1.LLMChunk) error { f.sent++; return nil }

// fakeEngine has an agent (agentToken), no live sub-agent and the
// messages of inflight (by id, their session); anything more of it is
// not called.
type fakeEngine struct {
	Engine
	agentToken string
	inflight   map[string]string
}

func (f *fakeEngine) SubAgentByToken(string) engine.SubAgent { return nil }
func (f *fakeEngine) AgentToken() string                     { return f.agentToken }
func (f *fakeEngine) MessageSession(id string) (string, bool) {
	s, ok := f.inflight[id]
	return s, ok
}

// TestGateway_EndedSubAgentTokenNotServedAsAgent (REVIEW15 F2): the
// authenticator passes a model call when its headers come; the handler
// reads the request after. A sub-agent that ended in between holds a
// token that is no one's: its call must be refused, not served on the
// session agent's path (recorded as the parent's, no subagent_id).
func TestGateway_EndedSubAgentTokenNotServedAsAgent(t *testing.T) {
	e := &fakeEngine{agentToken: "agent-token", inflight: map[string]string{"msg_parent": "ses_1"}}
	// The sub-agent's token is no longer in byToken: it has ended.
	for _, tok := range []string{"ended-sub-token", "", "agent-token-old"} {
		ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs(opxv1.AgentTokenHeader, tok))
		st := &fakeCompleteStream{ctx: ctx}
		err := NewService(e).Complete(&opxv1.LLMRequest{SessionId: "ses_1", MessageId: "msg_parent"}, st)
		if status.Code(err) != codes.Unauthenticated || st.sent != 0 {
			t.Errorf("token %q: %v, %d chunks sent; want Unauthenticated and nothing served", tok, err, st.sent)
		}
	}
}
