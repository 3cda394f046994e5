package engine_test

import (
	"bufio"
	"context"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/engine/grpcapi"
	"github.com/opx-dev/opx/engine/llm"
	"github.com/opx-dev/opx/fixtures"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/ledgertest"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
)

// spawnInLife runs one engine life on l: the client sends message msgID
// in session (new if ""), the parent spawns a sub-agent with call c1,
// and the engine stops. It returns the session and the sub-agent's id.
func spawnInLife(t *testing.T, l *ledger.Ledger, ws, session, msgID string) (string, string) {
	t.Helper()
	tr, err := llm.ParseTranscript(fixtures.DefaultTranscript)
	if err != nil {
		t.Fatal(err)
	}
	r := &running{l: l, tokens: make(chan string, 8), done: make(chan error, 1)}
	launches := make(chan engine.AgentLaunch, 8)
	pr, pw := io.Pipe()
	e, err := engine.New(engine.Options{Services: grpcapi.Register, Workspace: ws, Ledger: l, Provider: llm.NewScripted(tr), ClientToken: clientToken,
		Version: "test", Policy: "read-only", Stdout: pw, Logf: t.Logf, Agents: engine.AgentsConfig{Enabled: true},
		SpawnAgent: func(ctx context.Context, launch engine.AgentLaunch) (*exec.Cmd, error) {
			cmd := exec.Command("sleep", "60")
			if err := cmd.Start(); err != nil {
				return nil, err
			}
			if launch.SubAgentID != "" {
				launches <- launch
			} else {
				r.tokens <- launch.Token
			}
			return cmd, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { r.done <- e.Run(ctx) }()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "PORT:") {
		t.Fatalf("start-up line %q, %v", line, err)
	}
	go io.Copy(io.Discard, pr)
	if r.conn, err = grpc.NewClient("127.0.0.1:"+strings.TrimSpace(strings.TrimPrefix(line, "PORT:")), grpc.WithTransportCredentials(insecure.NewCredentials())); err != nil {
		t.Fatal(err)
	}
	r.ctx = metadata.AppendToOutgoingContext(context.Background(), engine.TokenHeader, clientToken)
	rig := &subRig{running: r, launches: launches}
	rig.parent = r.connectAgent(t, <-r.tokens)
	go func() {
		s, err := opxv1.NewClientServiceClient(r.conn).SendMessage(r.ctx, &opxv1.ClientMessageRequest{Content: "work", SessionId: session, MessageId: msgID})
		if err == nil {
			for {
				if _, err := s.Recv(); err != nil {
					return
				}
			}
		}
	}()
	for rig.msgID == "" {
		d, err := rig.parent.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if pr := d.GetProcessRequest(); pr != nil {
			rig.msgID, session = pr.MessageId, pr.SessionId
		}
	}
	if res := rig.call(t, "c1", "spawn_agent", `{"task":"x"}`); res.IsError {
		t.Fatal(res.Content)
	}
	l2 := <-launches
	cancel()
	if err := <-r.done; err != nil {
		t.Errorf("engine Run: %v", err)
	}
	r.conn.Close()
	return session, l2.SubAgentID
}

// TestSubAgents_IDsUniqueAcrossEngineLives (REVIEW15 F15): the same
// client-chosen message id and the same call id in one session, in two
// engine lives, spawn two sub-agents with two ids: the second engine
// knows the first's from the ledger. The ledger verifies strictly.
func TestSubAgents_IDsUniqueAcrossEngineLives(t *testing.T) {
	ws := t.TempDir()
	path := filepath.Join(t.TempDir(), "ledger.db")
	l, err := ledger.Create(path, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	session, first := spawnInLife(t, l, ws, "", "msg_chosen")
	_, second := spawnInLife(t, l, ws, session, "msg_chosen")
	if first == second {
		t.Errorf("sub-agent id %s spawned again in session %s by the next engine", first, session)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	ledgertest.MustVerify(t, path, event.StrictOptions())
}
