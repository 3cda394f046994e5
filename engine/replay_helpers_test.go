package engine_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opx-dev/opx/agent"
	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/engine/executor"
	"github.com/opx-dev/opx/engine/grpcapi"
	"github.com/opx-dev/opx/engine/judge"
	"github.com/opx-dev/opx/engine/llm"
	"github.com/opx-dev/opx/engine/mcp"
	"github.com/opx-dev/opx/engine/redrive"
	"github.com/opx-dev/opx/fixtures"
	"github.com/opx-dev/opx/internal/mcptest"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/ledgertest"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"github.com/opx-dev/opx/replay/projection"
	"github.com/opx-dev/opx/replay/rerun"
	"github.com/opx-dev/opx/shield"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
)

// inProcessAgent spawns a placeholder process and runs the real agent loop
// in this process with the launch's token: the engine sees an agent whose
// sandbox is unavailable (the CLI's e2e tests re-drive the sandboxed one).
// The loop ends with the supervisor's context, as the agent process ends
// when the supervisor stops it. A sub-agent's loop and its placeholder
// process end together, as a sub-agent process does: at its shutdown
// directive, or when the engine kills the process.
func inProcessAgent(t testing.TB) func(ctx context.Context, l engine.AgentLaunch) (*exec.Cmd, error) {
	return func(ctx context.Context, l engine.AgentLaunch) (*exec.Cmd, error) {
		cmd := exec.Command("sleep", "60")
		// The process holds the pipe's write end: a read of the other
		// end ends when it dies, without waiting for it (the engine does).
		r, w, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		cmd.Stdout = w
		err = cmd.Start()
		w.Close()
		if err != nil {
			r.Close()
			return nil, err
		}
		actx, cancel := context.WithCancel(ctx)
		go func() {
			defer r.Close()
			if l.SubAgentID != "" {
				go func() {
					_, _ = io.Copy(io.Discard, r)
					cancel()
				}()
			}
			_ = agent.Run(actx, agent.Config{Addr: l.Addr, Token: l.Token, CanaryJSON: []byte(unavailableCanary),
				AgentID: l.SubAgentID, SubAgentID: l.SubAgentID, ParentSession: l.ParentSession, MaxRounds: l.MaxRounds})
			cancel()
			if l.SubAgentID != "" {
				_ = cmd.Process.Kill()
			}
		}()
		return cmd, nil
	}
}

// recordSpec describes a live session to record.
type recordSpec struct {
	transcript string            // JSON
	policy     string            // YAML; "" for the default policy
	files      map[string]string // the workspace
	links      map[string]string // symlinks in it: name -> target
	messages   []string          // sent in order, in one session
	approve    bool              // how escalations to a human are answered
	fsync      bool              // the ledger fsyncs, as a live engine's does
	tier2      string            // a transcript for a tier 2 evaluator; "" for none
	agents     bool              // the agent tools are offered
	subRounds  int               // agents.max_rounds; 0 for the default
	subTimeout time.Duration     // agents.timeout; 0 for the default
	unanswered bool              // escalations to a human are left unanswered
	// subWaits leaves a sub-agent's escalations unanswered and approves
	// the session's agent's only once a sub-agent is waiting for one.
	subWaits bool
	// killWaiting kills a sub-agent's process once it waits for a human
	// (its escalation left unanswered).
	killWaiting bool
	// mcp are the MCP servers the engine runs, for the workspace ws, run
	// through this test binary as the sandbox launcher (internal/mcptest).
	mcp func(ws string) []mcp.Spec
	// check, if set, looks at the workspace once the messages are
	// answered, before the engine stops.
	check func(ws string)
	// before, if set, is called before message i is sent, with the
	// engine's ledger to wait on (Follow) and the context to call it in.
	before func(i int, ctx context.Context, ledger opxv1.LedgerServiceClient)
	// tune, if set, changes the engine's options before it starts.
	tune func(*engine.Options)
}

// recorded is a live session's ledger.
type recorded struct {
	path, session string
}

// recordSession runs a live engine (Shield, the in-process agent, real
// executors on a temporary workspace) through spec's messages and returns
// its closed ledger.
func recordSession(t testing.TB, spec recordSpec) recorded {
	t.Helper()
	ws := t.TempDir()
	for name, content := range spec.files {
		p := filepath.Join(ws, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, target := range spec.links {
		if err := os.Symlink(target, filepath.Join(ws, name)); err != nil {
			t.Fatal(err)
		}
	}
	state := t.TempDir()
	path := filepath.Join(state, "ledger.db")
	l, err := ledger.Create(path, ledger.Options{NoSync: !spec.fsync, Projections: projection.All()})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := llm.ParseTranscript([]byte(spec.transcript))
	if err != nil {
		t.Fatal(err)
	}
	text := fixtures.DefaultPolicy
	if spec.policy != "" {
		text = []byte(spec.policy)
	}
	pol, err := shield.ParsePolicy(text)
	if err != nil {
		t.Fatal(err)
	}
	env := &event.ShieldEnv{Home: "/home/tester", Protected: []string{state}, ReadOnly: []string{}}
	ev := judge.ShieldEvaluator{S: shield.New(shield.Config{Workspace: ws, Home: env.Home, Protected: env.Protected, Policy: pol})}
	var tier2 llm.Provider
	if spec.tier2 != "" {
		t2, err := llm.ParseTranscript([]byte(spec.tier2))
		if err != nil {
			t.Fatal(err)
		}
		tier2 = llm.NewScripted(t2)
	}
	// The sub-agents' processes, by id, for killWaiting.
	var procMu sync.Mutex
	procs := map[string]*os.Process{}
	spawn := func(ctx context.Context, l engine.AgentLaunch) (*exec.Cmd, error) {
		cmd, err := inProcessAgent(t)(ctx, l)
		if err == nil && l.SubAgentID != "" {
			procMu.Lock()
			procs[l.SubAgentID] = cmd.Process
			procMu.Unlock()
		}
		return cmd, err
	}
	pr, pw := io.Pipe()
	var mcpCfg *mcp.Config
	if spec.mcp != nil {
		mcpCfg = &mcp.Config{Sandbox: mcp.Sandbox{Self: mcptest.Self(t), HomeRoot: t.TempDir(), Log: io.Discard}, Specs: spec.mcp(ws)}
	}
	opts := engine.Options{Services: grpcapi.Register, Tier2Provider: tier2, Workspace: ws, Ledger: l, Provider: llm.NewScripted(tr), ClientToken: clientToken,
		Version: "test", Policy: "test policy", Evaluator: ev, PolicyText: text, ShieldEnv: env, Stdout: pw,
		HTTP: &executor.HTTPConfig{AllowHost: func(string) bool { return false }}, SpawnAgent: spawn,
		Agents: engine.AgentsConfig{Enabled: spec.agents, MaxRounds: spec.subRounds, Timeout: spec.subTimeout}, MCP: mcpCfg}
	if spec.tune != nil {
		spec.tune(&opts)
	}
	e, err := engine.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "PORT:") {
		t.Fatalf("start-up line %q, %v", line, err)
	}
	go io.Copy(io.Discard, pr)
	conn, err := grpc.NewClient("127.0.0.1:"+strings.TrimSpace(strings.TrimPrefix(line, "PORT:")), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	cctx := metadata.AppendToOutgoingContext(context.Background(), engine.TokenHeader, clientToken, "opx-client", "replay test")
	c := opxv1.NewClientServiceClient(conn)
	session := ""
	resolve := func(id string) {
		if _, err := c.ResolveApproval(cctx, &opxv1.ApprovalRequest{ApprovalId: id, Approved: spec.approve, Reason: "as the test says"}); err != nil {
			t.Fatal(err)
		}
	}
	subWaiting, deferred := false, []string(nil)
	for i, msg := range spec.messages {
		if spec.before != nil {
			spec.before(i, cctx, opxv1.NewLedgerServiceClient(conn))
		}
		s, err := c.SendMessage(cctx, &opxv1.ClientMessageRequest{SessionId: session, Content: msg})
		if err != nil {
			t.Fatal(err)
		}
		for {
			ev, err := s.Recv()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("send %q: %v", msg, err)
			}
			session = ev.SessionId
			if ev.Type != "approval_requested" || spec.unanswered {
				continue
			}
			var a struct {
				ID       string `json:"approval_id"`
				SubAgent string `json:"subagent_id"`
			}
			json.Unmarshal(ev.Data, &a)
			switch {
			case spec.killWaiting && a.SubAgent != "":
				procMu.Lock()
				procs[a.SubAgent].Kill()
				procMu.Unlock()
			case spec.subWaits && a.SubAgent != "":
				subWaiting = true
				for _, id := range deferred {
					resolve(id)
				}
				deferred = nil
			case spec.subWaits && !subWaiting:
				deferred = append(deferred, a.ID)
			default:
				resolve(a.ID)
			}
		}
	}
	if spec.check != nil {
		spec.check(ws)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	ledgertest.MustVerify(t, path, event.StrictOptions())
	return recorded{path: path, session: session}
}

// rerunSession reruns a recorded session with the in-process agent.
func rerunSession(t testing.TB, path, session string) *redrive.RerunReport {
	t.Helper()
	l, err := ledger.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	rec, err := rerun.Load(l, session)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "rerun.db")
	rep, err := redrive.Rerun(context.Background(), redrive.RerunConfig{Recording: rec, SpawnAgent: inProcessAgent(t), TempDir: t.TempDir(), LedgerPath: out})
	if err != nil {
		t.Fatal(err)
	}
	ledgertest.MustVerify(t, out, event.StrictOptions())
	return rep
}
