package engine_test

import (
	"context"
	"encoding/json"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/metadata"

	"github.com/opx-dev/opx/engine/mcp"
	"github.com/opx-dev/opx/internal/mcptest"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"github.com/opx-dev/opx/telemetry"
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

// TestEngine_MCP_Traceparent: with telemetry on, an MCP server's tool is
// called with params._meta.traceparent naming the call's execute_tool
// span in its turn's trace, as telemetry derives them from the ledger
// (the client.message and the tool.proposed).
func TestEngine_MCP_Traceparent(t *testing.T) {
	bad := mcptest.BadServer(t)
	mcptest.NeedSandbox(t)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := lis.Addr().String() // a collector that is down: the export is not what is tested here
	lis.Close()
	rec := recordSession(t, recordSpec{
		transcript: `{"model": "m", "turns": [{"match": "^meta", "steps": [{"tool_calls": [{"name": "mcp__bad__meta", "arguments": "{}"}]}, {"text": "{{.LastResult}}"}]}]}`,
		policy:     "version: 1\ndefault: allow\n",
		messages:   []string{"meta"},
		mcp: func(ws string) []mcp.Spec {
			return []mcp.Spec{{Name: "bad", Argv: []string{bad}, Workspace: ws, Timeout: 20 * time.Second}}
		},
		tune: liveTelemetry(down),
	})
	es := entriesOf(t, rec.path)
	var msgSeq, propSeq uint64
	var result string
	for _, e := range es {
		switch p := e.p.(type) {
		case *event.ClientMessage:
			msgSeq = e.Seq
		case *event.ToolProposed:
			if p.Tool == "mcp__bad__meta" {
				propSeq = e.Seq
			}
		case *event.ExecCompleted:
			if p.Tool == "mcp__bad__meta" {
				result = p.Result
			}
		}
	}
	l, err := ledger.OpenReadOnly(rec.path)
	if err != nil {
		t.Fatal(err)
	}
	id := l.ID()
	l.Close()
	want := "00-" + telemetry.TraceID(id, rec.session, msgSeq).String() + "-" + telemetry.SpanID(id, rec.session, propSeq).String() + "-01"
	if msgSeq == 0 || propSeq == 0 || !strings.Contains(result, want) {
		t.Errorf("the server got %q, want %q (client.message %d, tool.proposed %d)", result, want, msgSeq, propSeq)
	}
}
