package cli

// Ten sub-agents reading in parallel beside one agent reading alone
// (issue 15), with real processes: the engine runs in this process as
// `opx internal-engine` builds it (Shield under the default policy, an
// fsyncing ledger with its projections, loopback gRPC), and every agent
// and sub-agent is the built `opx internal-agent`, sandboxed and
// canary-checked, started by agentSpawner. Figures come from the ledger's
// timestamps (the engine's clock).
//
//	go test ./cli -run '^$' -bench SubAgentsParallelReads -benchtime 5x

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/engine/grpcapi"
	"github.com/opx-dev/opx/engine/judge"
	"github.com/opx-dev/opx/engine/llm"
	"github.com/opx-dev/opx/fixtures"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/ledgertest"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"github.com/opx-dev/opx/sandbox"
	"github.com/opx-dev/opx/shield"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
)

const (
	benchReaders = 10 // sub-agents
	benchReads   = 20 // read_file calls of each, in one step
)

// parallelReadsTranscript scripts the two messages: "bench fan out"
// spawns the readers in one step, each reading the 20 files in one step,
// then waits for all their results; "bench alone" has the session's agent
// read the same 200 files itself, 20 a step, as each reader does.
func parallelReadsTranscript() string {
	type call struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	type step struct {
		Text      string `json:"text,omitempty"`
		ToolCalls []call `json:"tool_calls,omitempty"`
	}
	type turn struct {
		Match string `json:"match"`
		Steps []step `json:"steps"`
	}
	var reads, spawns, results []call
	for i := 0; i < benchReads; i++ {
		reads = append(reads, call{"read_file", fmt.Sprintf(`{"path": "src/f%02d.txt"}`, i)})
	}
	for i := 0; i < benchReaders; i++ {
		spawns = append(spawns, call{"spawn_agent", fmt.Sprintf(`{"task": "bench reader %d", "tools": ["read_file"]}`, i)})
		results = append(results, call{"agent_result", fmt.Sprintf(`{"id": {{json (find "sub_[0-9a-f]{12}(_[0-9]+)?" (index .Results %d).Content)}}}`, i)})
	}
	done := step{Text: "{{len .Results}} results, {{.Errors}} errors"}
	alone := []step{}
	for i := 0; i < benchReaders; i++ {
		alone = append(alone, step{ToolCalls: reads})
	}
	turns := []turn{
		{"^bench reader", []step{{ToolCalls: reads}, done}},
		{"^bench fan out", []step{{ToolCalls: spawns}, {ToolCalls: results}, done}},
		{"^bench alone", append(alone, done)},
	}
	b, _ := json.Marshal(map[string]any{"model": "bench-sub-1", "turns": turns})
	return string(b)
}

// BenchmarkSubAgentsParallelReads: each iteration starts an engine and
// sends two messages, in alternating order, each in its own session: one
// whose agent spawns ten sub-agents in one step, each making 20 read_file
// calls, and waits for all ten results; one whose agent makes the same
// 200 calls itself. Figures (medians): each message's wall time, from its
// client.message to the session agent's agent.response_complete,
// alone/parallel (above 1: the sub-agents finish sooner), and how much of
// the parallel message went to starting the sub-agents (all-ready: its
// client.message to the last sub-agent's agent.ready).
//
// Shield's per-session rate limit (120 proposals a minute) is raised for
// the benchmark: both messages make over 200 proposals in a few seconds,
// the sub-agents' counting in their parent's session.
func BenchmarkSubAgentsParallelReads(b *testing.B) {
	bin := buildBenchOpx(b)
	var parallel, alone, ready []time.Duration
	for i := 0; i < b.N; i++ {
		msgs := []string{"bench fan out", "bench alone"}
		if i%2 == 1 {
			msgs[0], msgs[1] = msgs[1], msgs[0]
		}
		t := runParallelReads(b, bin, msgs)
		parallel, alone, ready = append(parallel, t.parallel), append(alone, t.alone), append(ready, t.ready)
	}
	b.ReportMetric(benchMS(benchMedian(parallel)), "parallel-ms")
	b.ReportMetric(benchMS(benchMedian(ready)), "all-ready-ms")
	b.ReportMetric(benchMS(benchMedian(alone)), "alone-ms")
	b.ReportMetric(float64(benchMedian(alone))/float64(benchMedian(parallel)), "alone/parallel")
}

// readTimes are the wall times of one run: the fan-out message, the
// message read alone, and the fan-out's client.message to the last
// sub-agent's agent.ready.
type readTimes struct{ parallel, alone, ready time.Duration }

// runParallelReads runs one engine through msgs.
func runParallelReads(b *testing.B, bin string, msgs []string) readTimes {
	ws := b.TempDir()
	for i := 0; i < benchReads; i++ {
		p := filepath.Join(ws, "src", fmt.Sprintf("f%02d.txt", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(strings.Repeat(fmt.Sprintf("line of file %d\n", i), 40)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	state := b.TempDir()
	path := filepath.Join(state, "ledger.db")
	l, err := ledger.Create(path, writeOptions())
	if err != nil {
		b.Fatal(err)
	}
	tr, err := llm.ParseTranscript([]byte(parallelReadsTranscript()))
	if err != nil {
		b.Fatal(err)
	}
	policy, err := shield.ParsePolicy(fixtures.DefaultPolicy)
	if err != nil {
		b.Fatal(err)
	}
	env := &event.ShieldEnv{Home: "/home/nobody", Protected: []string{state}, ReadOnly: []string{}}
	sh := shield.New(shield.Config{Workspace: ws, Home: env.Home, Protected: env.Protected, Policy: policy, RateLimit: 10000})
	pr, pw := io.Pipe()
	const token = "bench-client-token"
	e, err := engine.New(engine.Options{Services: grpcapi.Register, Workspace: ws, Ledger: l, Provider: llm.NewScripted(tr), ClientToken: token, Version: "bench",
		Policy: "default", Evaluator: judge.ShieldEvaluator{S: sh}, PolicyText: fixtures.DefaultPolicy, ShieldEnv: env, Stdout: pw,
		RunDir: filepath.Join(state, "run"), MaxToolCalls: benchReaders*benchReads + 10, SpawnAgent: agentSpawner(bin, io.Discard),
		RequireSandbox: benchSandboxRequired(), Logf: func(string, ...any) {},
		Agents: engine.AgentsConfig{Enabled: true, MaxConcurrent: benchReaders}})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "PORT:") {
		b.Fatalf("start-up line %q, %v", line, err)
	}
	go io.Copy(io.Discard, pr)
	conn, err := grpc.NewClient("127.0.0.1:"+strings.TrimSpace(strings.TrimPrefix(line, "PORT:")), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		b.Fatal(err)
	}
	cctx := metadata.AppendToOutgoingContext(ctx, engine.TokenHeader, token)
	c := opxv1.NewClientServiceClient(conn)
	for _, m := range msgs {
		s, err := c.SendMessage(cctx, &opxv1.ClientMessageRequest{Content: m})
		if err != nil {
			b.Fatal(err)
		}
		for {
			if _, err := s.Recv(); err == io.EOF {
				break
			} else if err != nil {
				b.Fatalf("send %q: %v", m, err)
			}
		}
	}
	conn.Close()
	cancel()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	if err := l.Close(); err != nil {
		b.Fatal(err)
	}
	ledgertest.MustVerify(b, path, event.StrictOptions())
	return parallelReadTimes(b, path)
}

// parallelReadTimes reads the wall times from the ledger, checking every
// read ran and every reader completed sandboxed.
func parallelReadTimes(b *testing.B, path string) readTimes {
	l, err := ledger.OpenReadOnly(path)
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	var t readTimes
	start := map[string]time.Time{} // by session: client.message
	fanned := map[string]bool{}     // sessions that spawned
	reads, subs, sandboxed := 0, 0, 0
	failures := map[string]int{}
	err = l.Range(0, ^uint64(0), func(en ledger.Entry) error {
		at, err := en.Time()
		if err != nil {
			return err
		}
		var d struct {
			SubAgentID   string `json:"subagent_id"`
			Tool         string `json:"tool"`
			Decision     string `json:"decision"`
			Rule         string `json:"rule"`
			CanaryStatus string `json:"canary_status"`
			TokenValid   bool   `json:"token_valid"`
		}
		_ = json.Unmarshal(en.Data, &d)
		switch {
		case en.Type == event.TypeClientMessage:
			start[en.Session] = at
		case en.Type == event.TypeSubAgentSpawned:
			fanned[en.Session] = true
		case en.Type == event.TypeSubAgentCompleted:
			subs++
		case en.Type == event.TypeAgentReady && d.TokenValid:
			if d.CanaryStatus == event.CanarySandboxed {
				sandboxed++
			}
			if d.SubAgentID != "" {
				t.ready = max(t.ready, at.Sub(start[en.Session]))
			}
		case en.Type == event.TypeExecCompleted && d.Tool == "read_file":
			reads++
		case en.Type == event.TypeShieldVerdict && d.Decision == event.Block:
			failures[d.Rule]++
		case en.Type == event.TypeSubAgentFailed || en.Type == event.TypeAgentError:
			failures[en.Type]++
		case en.Type == event.TypeResponseComplete && d.SubAgentID == "" && fanned[en.Session]:
			t.parallel = at.Sub(start[en.Session])
		case en.Type == event.TypeResponseComplete && d.SubAgentID == "":
			t.alone = at.Sub(start[en.Session])
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	if subs != benchReaders || reads != 2*benchReaders*benchReads || t.parallel == 0 || t.alone == 0 || len(failures) > 0 ||
		(benchSandboxRequired() && sandboxed != benchReaders+1) {
		b.Fatalf("%d sub-agents completed, %d reads, %d agents sandboxed, wall times %+v; failures %v", subs, reads, sandboxed, t, failures)
	}
	return t
}

// buildBenchOpx builds the opx binary the agents run as.
func buildBenchOpx(b *testing.B) string {
	bin := filepath.Join(b.TempDir(), "opx")
	if out, err := exec.Command("go", "build", "-o", bin, "./opx").CombinedOutput(); err != nil {
		b.Fatalf("go build opx: %v\n%s", err, out)
	}
	return bin
}

// benchSandboxRequired: the agents must be sandboxed wherever the kernel
// sandbox exists, and always on CI.
func benchSandboxRequired() bool { return sandbox.New().Available() || os.Getenv("CI") == "true" }

func benchMedian(d []time.Duration) time.Duration {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return d[len(d)/2]
}

func benchMS(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
