package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
)

// told is one thing a client was told by the engine.
type told struct {
	client int
	ev     *opxv1.PipelineEvent
	sent   string // the content the client sent, for its message event
}

// TestE2E_EngineKilledWhileClientsSend: clients send messages to the real
// engine while it is killed with SIGKILL (once several messages were
// acknowledged, a condition, not a timer); after the manager restarted it
// and it was stopped, everything any client was told names an entry of
// the ledger with the same content: each seq an entry of the event's
// session (the message event's seq its client.message, with the client's
// text), each session id a session.created, each message id a
// client.message. A seq told before its entry was durable would be
// missing, or given to another entry by the next engine.
func TestE2E_EngineKilledWhileClientsSend(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	m := w.start()
	st, _ := w.status()
	out, _, _ := w.run("status", "--json")
	var port struct {
		GRPCPort int `json:"grpc_port"`
	}
	json.Unmarshal([]byte(out), &port)
	tokens, _ := filepath.Glob(filepath.Join(w.state, "opx", "*", "client.token"))
	if len(tokens) != 1 || port.GRPCPort == 0 {
		t.Fatalf("client token files %v, status %s", tokens, out)
	}
	tok, _ := os.ReadFile(tokens[0])
	conn, err := grpc.NewClient(fmt.Sprintf("127.0.0.1:%d", port.GRPCPort), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx := metadata.AppendToOutgoingContext(context.Background(), engine.TokenHeader, strings.TrimSpace(string(tok)))

	const clients, killAfter = 4, 12
	var mu sync.Mutex
	var all []told
	acked := 0
	kill := make(chan struct{})
	var wg sync.WaitGroup
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cc := opxv1.NewClientServiceClient(conn)
			for i := 0; ; i++ {
				content := fmt.Sprintf("client %d message %d: read README.md", c, i)
				s, err := cc.SendMessage(ctx, &opxv1.ClientMessageRequest{Content: content})
				if err != nil {
					return
				}
				for {
					ev, err := s.Recv()
					if err != nil {
						break
					}
					mu.Lock()
					all = append(all, told{client: c, ev: ev, sent: content})
					if ev.Type == "message" {
						if acked++; acked == killAfter {
							close(kill)
						}
					}
					mu.Unlock()
				}
				select {
				case <-kill:
					return // the engine is gone or going; this client stops
				default:
				}
			}
		}()
	}
	<-kill
	w.kill(st.EnginePID)
	wg.Wait()
	// The manager starts another engine; stop it cleanly.
	deadline := time.Now().Add(30 * time.Second)
	for {
		if s, code := w.status(); code == 0 && s.EnginePID != st.EnginePID && s.AgentPID != 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no engine after the kill:\n%s", m.out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	w.stop(m)

	types := w.types(st.LedgerPath) // verifies strictly first
	if count(types, "engine.crashed") != 1 {
		t.Fatalf("want one engine.crashed: %v", types)
	}
	l, err := ledger.OpenReadOnly(st.LedgerPath)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	entries := map[uint64]ledger.Entry{}
	sessions, messages := map[string]bool{}, map[string]string{} // message id -> content
	h, _ := l.Head()
	l.Range(0, h.Seq, func(en ledger.Entry) error {
		entries[en.Seq] = en
		switch en.Type {
		case event.TypeSessionCreated:
			sessions[en.Session] = true
		case event.TypeClientMessage:
			var cm event.ClientMessage
			json.Unmarshal(en.Data, &cm)
			messages[cm.MessageID] = cm.Content
		}
		return nil
	})
	bad := 0
	for _, tl := range all {
		ev := tl.ev
		var problem string
		switch en, ok := entries[ev.Seq]; {
		case ev.Seq > 0 && !ok:
			problem = fmt.Sprintf("seq %d is not in the ledger (head %d)", ev.Seq, h.Seq)
		case ev.Seq > 0 && en.Session != ev.SessionId:
			problem = fmt.Sprintf("seq %d is an entry of session %q (%s)", ev.Seq, en.Session, en.Type)
		case ev.Type == "message" && en.Type != event.TypeClientMessage:
			problem = fmt.Sprintf("seq %d is %s, not the client.message", ev.Seq, en.Type)
		case !sessions[ev.SessionId]:
			problem = "session " + ev.SessionId + " was never created"
		case messages[ev.MessageId] == "":
			problem = "message " + ev.MessageId + " is not in the ledger"
		case ev.Type == "message" && messages[ev.MessageId] != tl.sent:
			problem = fmt.Sprintf("message %s holds %q, the client sent %q", ev.MessageId, messages[ev.MessageId], tl.sent)
		}
		if problem != "" {
			if bad++; bad <= 10 {
				t.Errorf("client %d was told %s (seq %d, session %s, message %s): %s", tl.client, ev.Type, ev.Seq, ev.SessionId, ev.MessageId, problem)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d events told to clients name entries the ledger does not hold", bad, len(all))
	}
	if len(all) < killAfter {
		t.Errorf("only %d events told", len(all))
	}
}
