package redrive

import (
	"context"
	"fmt"

	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// drive feeds the recorded client messages, in order, each once the one
// before it is answered, through the live SendMessage path, then stops
// the engine. It stops feeding once the replay left the record.
func (s *replayState) drive(ctx context.Context, e *engine.Engine) {
	// As a client's Shutdown, without the pause a reply needs.
	defer e.StopReplay()
	if s.rec.Proxy != nil {
		e.ReplayProxy(ctx) // no agent: engine/mcpproxy/replay.go
		return
	}
	if err := e.AwaitAgent(ctx); err != nil {
		s.fail(fmt.Errorf("replay: %w", err))
		return
	}
	sid := s.rec.Session
	for i, m := range s.rec.Messages {
		if s.isOffRecord() {
			return
		}
		s.mu.Lock()
		s.message = m
		s.mu.Unlock()
		if m.Engine != nil {
			s.mu.Lock()
			s.engine = m.Engine
			s.mu.Unlock()
			e.SetMaxToolCalls(m.Engine.Started.MaxToolCalls)
		}
		if i == 0 {
			// As SendMessage opens a new session, but with the recorded
			// id; SendMessage then finds it in the sessions projection.
			e.Record(ctx, ledger.Async, sid, &event.SessionCreated{Mode: s.rec.Mode, Title: engine.TitleOf(m.Content)})
		}
		md := metadata.MD{}
		if m.Client != "" {
			md.Set("opx-client", m.Client)
		}
		stream := &replayStream{ctx: metadata.NewIncomingContext(ctx, md)}
		err := e.SendMessage(&opxv1.ClientMessageRequest{SessionId: sid, MessageId: m.ID,
			Content: m.Content, Mode: m.Mode}, stream)
		if err != nil {
			s.fail(fmt.Errorf("replay message %s (entry %d): %w", m.ID, m.Seq, err))
			return
		}
	}
}

// replayStream is the client side of a replayed SendMessage: it carries
// the recorded client's name and discards the events streamed back (the
// ledger holds them).
type replayStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (r *replayStream) Context() context.Context        { return r.ctx }
func (r *replayStream) Send(*opxv1.PipelineEvent) error { return nil }
