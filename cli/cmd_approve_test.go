package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opx-dev/opx/cli"
	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/engine/grpcapi"
	"github.com/opx-dev/opx/engine/judge"
	"github.com/opx-dev/opx/engine/llm"
	"github.com/opx-dev/opx/engine/registry"
	"github.com/opx-dev/opx/fixtures"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/ledgertest"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"github.com/opx-dev/opx/shield"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
)

// approvalPolicy asks a human about every read under t3/.
const approvalPolicy = `version: 1
default: allow
verify:
  - {name: human-reads, tools: [read_file], paths: ["t3/**"], tier: 3}
`

// liveEngine is an engine running in the test process, published in the
// registry of a temporary state dir the way opx start publishes it, with a
// test agent that reads t3/a.md for every message and answers with what
// it got.
type liveEngine struct {
	ws     string
	ctx    context.Context
	client opxv1.ClientServiceClient
}

func startLiveEngine(t *testing.T) *liveEngine {
	t.Helper()
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	t.Setenv("OPX_LEDGER", "")
	t.Setenv("NO_COLOR", "1")
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(ws, "t3"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "t3", "a.md"), []byte("the guarded file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	id, err := ledger.WorkspaceID(ws)
	if err != nil {
		t.Fatal(err)
	}
	path, err := ledger.DefaultPath(id)
	if err != nil {
		t.Fatal(err)
	}
	lock, err := registry.Acquire(registry.Dir(filepath.Dir(path)))
	if err != nil {
		t.Fatal(err)
	}
	token, err := lock.NewToken()
	if err != nil {
		t.Fatal(err)
	}
	l, err := ledger.Create(path, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	policy, err := shield.ParsePolicy([]byte(approvalPolicy))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := llm.ParseTranscript(fixtures.DefaultTranscript)
	if err != nil {
		t.Fatal(err)
	}
	agentTokens := make(chan string, 4)
	pr, pw := io.Pipe()
	e, err := engine.New(engine.Options{Services: grpcapi.Register, Workspace: ws, Ledger: l, Provider: llm.NewScripted(tr), ClientToken: token, Version: "test",
		Policy: "approval", Stdout: pw, Logf: t.Logf, ApprovalTimeout: time.Minute,
		Evaluator: judge.ShieldEvaluator{S: shield.New(shield.Config{Workspace: ws, Home: "/home/nobody", Policy: policy})},
		SpawnAgent: func(ctx context.Context, launch engine.AgentLaunch) (*exec.Cmd, error) {
			cmd := exec.Command("sleep", "60")
			err := cmd.Start()
			go func() { time.Sleep(20 * time.Millisecond); agentTokens <- launch.Token }()
			return cmd, err
		}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	port := enginePort(t, pr)
	if err := lock.Publish(registry.Entry{Workspace: ws, ManagerPID: os.Getpid(), EnginePID: os.Getpid(), Port: port, Ledger: path}); err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient(registry.Entry{Port: port}.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	agentToken := <-agentTokens
	agent, err := opxv1.NewAgentServiceClient(conn).RunSession(metadata.AppendToOutgoingContext(context.Background(), opxv1.AgentTokenHeader, agentToken))
	if err != nil {
		t.Fatal(err)
	}
	agent.Send(&opxv1.AgentEvent{Event: &opxv1.AgentEvent_AgentReady{AgentReady: &opxv1.AgentReady{AgentId: "test-agent", Token: agentToken,
		SandboxCanaryJson: `{"verified":false,"status":"unavailable","platform":"linux","mechanism":"none","probes":[],"summary":"test agent","timestamp":"2026-11-22T10:00:00Z"}`}}})
	go guardedReader(agent)
	t.Cleanup(func() {
		agent.CloseSend()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("engine Run: %v", err)
		}
		conn.Close()
		if err := l.Close(); err != nil {
			t.Error(err)
		}
		lock.Release()
		ledgertest.MustVerify(t, path, event.StrictOptions())
	})
	return &liveEngine{ws: ws, client: opxv1.NewClientServiceClient(conn),
		ctx: metadata.AppendToOutgoingContext(context.Background(), engine.TokenHeader, token)}
}

// guardedReader is the test agent: for each message it proposes reading
// t3/a.md and answers with the result.
func guardedReader(s opxv1.AgentService_RunSessionClient) {
	for {
		d, err := s.Recv()
		if err != nil {
			return
		}
		pr := d.GetProcessRequest()
		if pr == nil {
			continue
		}
		call := "c-" + pr.MessageId
		s.Send(&opxv1.AgentEvent{Event: &opxv1.AgentEvent_ToolCall{ToolCall: &opxv1.ToolCallProposed{CallId: call, ToolName: "read_file",
			ArgumentsJson: `{"path":"t3/a.md"}`, MessageId: pr.MessageId}}})
		var res *opxv1.ToolResultDelivery
		for res == nil || res.CallId != call {
			d, err := s.Recv()
			if err != nil {
				return
			}
			res = d.GetToolResult()
		}
		s.Send(&opxv1.AgentEvent{Event: &opxv1.AgentEvent_LlmToken{LlmToken: &opxv1.LLMTokenEmitted{MessageId: pr.MessageId, Token: "got: " + res.Content}}})
		s.Send(&opxv1.AgentEvent{Event: &opxv1.AgentEvent_ResponseComplete{ResponseComplete: &opxv1.AgentResponseComplete{MessageId: pr.MessageId, Content: res.Content}}})
	}
}

// pending waits until an approval is pending and returns its id.
func (e *liveEngine) pending(t *testing.T) string {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		ls, err := e.client.ListApprovals(e.ctx, &opxv1.ListApprovalsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if len(ls.Approvals) > 0 {
			return ls.Approvals[0].ApprovalId
		}
	}
	t.Fatal("no approval became pending")
	return ""
}

// TestApprove_SendApproveDeny: opx send shows an approval request with the
// commands that answer it; opx approve (and opx deny --json) answer it from
// another "terminal"; the call runs or is refused accordingly; a second
// answer, and a usage error, fail with their exit codes.
func TestApprove_SendApproveDeny(t *testing.T) {
	e := startLiveEngine(t)
	ws := e.ws
	r := run(t, "approve", "--workspace", ws)
	r.wantCode(t, 0)
	r.wantOut(t, "no approvals pending")

	sent := make(chan result, 1)
	go func() { sent <- run(t, "send", "--workspace", ws, "read", "it") }()
	id := e.pending(t)
	r = run(t, "approve", "--workspace", ws)
	r.wantCode(t, 0)
	r.wantOut(t, id, "read_file", "human-reads", "answer with")
	r = run(t, "approve", id, "--reason", "looks fine", "--workspace", ws)
	r.wantCode(t, 0)
	r.wantOut(t, "approved "+id+": read_file", "recorded at seq")
	s := <-sent
	s.wantCode(t, 0)
	s.wantErr(t, "approval needed "+id, "opx approve "+id, "opx deny "+id, "approved by opx approve")
	s.wantOut(t, "got: the guarded file")

	r = run(t, "deny", id, "--workspace", ws)
	r.wantCode(t, 1)
	r.wantErr(t, "no pending approval "+id)

	go func() { sent <- run(t, "send", "--workspace", ws, "read", "it", "again") }()
	id = e.pending(t)
	r = run(t, "deny", "--json", "--reason", "not today", id, "--workspace", ws)
	r.wantCode(t, 0)
	var out struct {
		ApprovalID string `json:"approval_id"`
		Approved   bool   `json:"approved"`
		By         string `json:"by"`
		Tool       string `json:"tool"`
		Seq        uint64 `json:"seq"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || out.ApprovalID != id || out.Approved || out.By != "opx deny" || out.Tool != "read_file" || out.Seq == 0 {
		t.Errorf("--json: %s (%v)", r.stdout, err)
	}
	s = <-sent
	s.wantCode(t, 0)
	s.wantErr(t, "denied by opx deny")
	s.wantOut(t, "denied by a human", "not today")

	run(t, "approve", "a", "b", "--workspace", ws).wantCode(t, 2)
}

// TestChat_AnswersApproval: opx chat shows the request inline and takes
// the user's y.
func TestChat_AnswersApproval(t *testing.T) {
	e := startLiveEngine(t)
	app := cli.NewApp()
	var out, errOut bytes.Buffer
	app.Reader = strings.NewReader("read it\nmaybe\ny\n/approvals\n/deny apr_nope\n/quit\n")
	app.Writer, app.ErrWriter = &out, &errOut
	if err := app.Run([]string{"opx", "chat", "--workspace", e.ws}); err != nil {
		t.Fatalf("chat: %v\n%s\n%s", err, out.String(), errOut.String())
	}
	o, eo := out.String(), errOut.String()
	for _, want := range []string{"approve apr_", "? [y/n]", "approved apr_", "got: the guarded file", "no approvals pending"} {
		if !strings.Contains(o, want) {
			t.Errorf("stdout lacks %q:\n%s", want, o)
		}
	}
	for _, want := range []string{"approval needed", "answer y or n", "approved by opx chat", "no pending approval apr_nope"} {
		if !strings.Contains(eo, want) {
			t.Errorf("stderr lacks %q:\n%s", want, eo)
		}
	}
}
