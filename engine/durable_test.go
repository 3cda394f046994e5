package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
)

// durableFacts checks, at the moment a client holds an event, that what
// it names is durable: its seq (an entry of its session), its session
// (session.created) and its message (client.message).
func durableFacts(l *ledger.Ledger, ev *opxv1.PipelineEvent) error {
	w, err := l.Watermark()
	if err != nil {
		return err
	}
	if ev.Seq > w.Durable {
		return fmt.Errorf("%s names seq %d; durable %d", ev.Type, ev.Seq, w.Durable)
	}
	var session, message bool
	err = l.Range(0, w.Durable, func(en ledger.Entry) error {
		switch {
		case en.Seq == ev.Seq && ev.Seq > 0 && en.Session != ev.SessionId:
			return fmt.Errorf("%s names seq %d, an entry of session %q, not %q", ev.Type, ev.Seq, en.Session, ev.SessionId)
		case en.Type == event.TypeSessionCreated && en.Session == ev.SessionId:
			session = true
		case en.Type == event.TypeClientMessage && en.Session == ev.SessionId:
			var m event.ClientMessage
			if json.Unmarshal(en.Data, &m) == nil && m.MessageID == ev.MessageId {
				message = true
			}
		}
		return nil
	})
	switch {
	case err != nil:
		return err
	case !session:
		return fmt.Errorf("%s names session %s, not durable (durable %d)", ev.Type, ev.SessionId, w.Durable)
	case !message:
		return fmt.Errorf("%s names message %s, not durable (durable %d)", ev.Type, ev.MessageId, w.Durable)
	}
	return nil
}

// TestEngine_ClientsToldOnlyDurable: a conversation (new session, model
// call, tool call, answer) seen by the client that sends it, by a second
// client following the session, and by a ledger follower: every event a
// client holds names only durable entries, and every entry a follower
// receives is durable.
func TestEngine_ClientsToldOnlyDurable(t *testing.T) {
	r := startEngine(t)
	agent := r.connectAgent(t, <-r.tokens)
	gw := opxv1.NewLLMGatewayClient(r.conn)
	agentErr := make(chan error, 1)
	go func() { agentErr <- runScriptedAgent(agent, gw) }()

	fctx, stopFollow := context.WithCancel(r.ctx)
	follow, err := opxv1.NewLedgerServiceClient(r.conn).Follow(fctx, &opxv1.FollowRequest{})
	if err != nil {
		t.Fatal(err)
	}
	followed := make(chan error, 1)
	go func() {
		for {
			en, err := follow.Recv()
			if err != nil {
				followed <- nil
				return
			}
			if w, _ := r.l.Watermark(); en.Seq > w.Durable {
				followed <- fmt.Errorf("Follow sent entry %d; durable %d", en.Seq, w.Durable)
				return
			}
		}
	}()

	c := opxv1.NewClientServiceClient(r.conn)
	for i, content := range []string{"please read README.md", "and again"} {
		s, err := c.SendMessage(r.ctx, &opxv1.ClientMessageRequest{Content: content})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for {
			ev, err := s.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("message %d: %v", i, err)
			}
			n++
			if err := durableFacts(r.l, ev); err != nil {
				t.Errorf("message %d, event %d: %v", i, n, err)
			}
		}
		if n < 4 {
			t.Errorf("message %d: %d events", i, n)
		}
	}
	if h, _ := r.l.Head(); h.Seq == 0 {
		t.Fatal("nothing recorded")
	}
	if st, err := c.GetStatus(r.ctx, &opxv1.StatusRequest{}); err != nil {
		t.Fatal(err)
	} else if w, _ := r.l.Watermark(); st.LedgerHeadSeq > w.Durable {
		t.Errorf("GetStatus head %d; durable %d", st.LedgerHeadSeq, w.Durable)
	}
	stopFollow()
	if err := <-followed; err != nil {
		t.Error(err)
	}
	agent.CloseSend()
	<-agentErr
}

// TestEngine_UnaryAnswersAfterDurable: a client's unary answer leaves only
// once what was appended before it is durable. The group commit is held
// back (an hour), so an entry queued Async stays queued unless the answer
// waits for it.
func TestEngine_UnaryAnswersAfterDurable(t *testing.T) {
	r := startEngineWith(t, ledger.Options{FlushInterval: time.Hour})
	c := opxv1.NewClientServiceClient(r.conn)
	for name, call := range map[string]func() error{
		"GetStatus": func() error { _, err := c.GetStatus(r.ctx, &opxv1.StatusRequest{}); return err },
		"ListSessions": func() error {
			_, err := c.ListSessions(r.ctx, &opxv1.ListSessionsRequest{})
			return err
		},
		"Rollback (refused)": func() error {
			_, err := opxv1.NewChronicleServiceClient(r.conn).Rollback(r.ctx, &opxv1.RollbackRequest{})
			return err
		},
	} {
		rec, err := event.Record("", &event.Note{Author: "test", Text: name})
		if err != nil {
			t.Fatal(err)
		}
		a, err := r.l.Append(context.Background(), ledger.Async, rec)
		if err != nil {
			t.Fatal(err)
		}
		if err := call(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if w, _ := r.l.Watermark(); w.Durable < a[0].Seq {
			t.Errorf("%s answered with entry %d queued; durable %d", name, a[0].Seq, w.Durable)
		}
	}
}
