package engine_test

import (
	"context"
	"encoding/json"
	"testing"

	"google.golang.org/grpc/metadata"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
)

// TestSendMessage_Traceparent_Recorded: a W3C traceparent a client sends
// in its metadata (opx send's TRACEPARENT) is recorded with the message;
// one that is not valid is not.
func TestSendMessage_Traceparent_Recorded(t *testing.T) {
	r := startEngine(t)
	agent := r.connectAgent(t, <-r.tokens)
	c := opxv1.NewClientServiceClient(r.conn)
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	for _, sent := range []string{tp, "00-" + "zz" + tp[5:], "01-" + tp[3:]} {
		ctx := metadata.AppendToOutgoingContext(r.ctx, "traceparent", sent)
		s, err := c.SendMessage(ctx, &opxv1.ClientMessageRequest{Content: "hello " + sent})
		if err != nil {
			t.Fatal(err)
		}
		d, err := agent.Recv()
		if err != nil {
			t.Fatal(err)
		}
		msg := d.GetProcessRequest().MessageId
		agent.Send(&opxv1.AgentEvent{Event: &opxv1.AgentEvent_ResponseComplete{ResponseComplete: &opxv1.AgentResponseComplete{MessageId: msg, Content: "ok"}}})
		for {
			ev, err := s.Recv()
			if err != nil {
				t.Fatal(err)
			}
			if ev.GetType() == "response_complete" || ev.GetType() == "error" {
				break
			}
		}
	}
	want := map[string]string{"hello " + tp: tp, "hello 00-zz" + tp[5:]: "", "hello 01-" + tp[3:]: ""}
	seen := 0
	for seen < len(want) {
		seen = 0
		r.l.Sync(context.Background())
		err := r.l.Range(0, ^uint64(0), func(e ledger.Entry) error {
			if e.Type != event.TypeClientMessage {
				return nil
			}
			var m event.ClientMessage
			if err := json.Unmarshal(e.Data, &m); err != nil {
				return err
			}
			w, ok := want[m.Content]
			if !ok {
				return nil
			}
			seen++
			if m.Traceparent != w {
				t.Errorf("%q recorded traceparent %q, want %q", m.Content, m.Traceparent, w)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
