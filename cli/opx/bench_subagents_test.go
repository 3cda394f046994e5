package main_test

// Sub-agent benchmarks (issue 15), with the real process tree: `opx
// start` (manager, engine, sandboxed agent), sub-agents as sandboxed `opx
// internal-agent` processes, the scripted model, Shield under the default
// policy, an fsyncing ledger. Every figure is read from the ledger's
// timestamps (the engine's clock), with its baseline from the same engine
// run.
//
//	go test ./cli/opx -run '^$' -bench 'SubAgent' -benchtime 5x

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/opx-dev/opx/engine/registry"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/ledgertest"
)

// benchReads is how many files a reader reads, and each reader's tool
// calls.
const benchReads = 20

// subAgentBenchTranscript scripts the benchmarks' messages:
//
//   - "bench spawn one": one sub-agent that answers at once, waited for.
//   - "bench fan out": ten sub-agents spawned in one step, each reading
//     the 20 files in one step, then all ten results waited for.
//   - "bench alone": the session's agent reads the same 200 files itself,
//     20 a step (as each sub-agent does).
func subAgentBenchTranscript(readers int) string {
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
	var reads []call
	for i := 0; i < benchReads; i++ {
		reads = append(reads, call{"read_file", fmt.Sprintf(`{"path": "src/f%02d.txt"}`, i)})
	}
	idOf := func(i int) string {
		return fmt.Sprintf(`{"id": {{json (find "sub_[0-9a-f]{12}(_[0-9]+)?" (index .Results %d).Content)}}}`, i)
	}
	var spawns, results []call
	for i := 0; i < readers; i++ {
		spawns = append(spawns, call{"spawn_agent", fmt.Sprintf(`{"task": "bench reader %d", "tools": ["read_file"]}`, i)})
		results = append(results, call{"agent_result", idOf(i)})
	}
	var alone []step
	for i := 0; i < readers; i++ {
		alone = append(alone, step{ToolCalls: reads})
	}
	alone = append(alone, step{Text: "read {{len .Results}} files, {{.Errors}} errors"})
	turns := []turn{
		{"^bench idle", []step{{Text: "idle"}}},
		{"^bench reader", []step{{ToolCalls: reads}, {Text: "read {{len .Results}} files, {{.Errors}} errors"}}},
		{"^bench spawn one", []step{{ToolCalls: []call{{"spawn_agent", `{"task": "bench idle"}`}}},
			{ToolCalls: []call{{"agent_result", idOf(0)}}}, {Text: "{{.LastResult}}"}}},
		{"^bench fan out", []step{{ToolCalls: spawns}, {ToolCalls: results}, {Text: "{{.Errors}} errors"}}},
		{"^bench alone", alone},
	}
	b, _ := json.Marshal(map[string]any{"model": "bench-sub-1", "turns": turns})
	return string(b)
}

// benchEngine is a workspace with an engine started on it by `opx start`.
type benchEngine struct {
	b              *testing.B
	bin, ws, state string
	env            []string
	mgr            *exec.Cmd
}

// startBenchEngine writes a workspace (the files, the transcript, a
// configuration allowing readers sub-agents at once) and starts an
// engine on it, returning once its agent is connected.
func startBenchEngine(b *testing.B, bin string, readers int) *benchEngine {
	b.Helper()
	ws, state := b.TempDir(), b.TempDir()
	for i := 0; i < benchReads; i++ {
		p := filepath.Join(ws, "src", fmt.Sprintf("f%02d.txt", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(strings.Repeat(fmt.Sprintf("line of file %d\n", i), 40)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	cfg := fmt.Sprintf("provider:\n  kind: scripted\n  transcript: .opx/bench.json\nlimits:\n  max_tool_calls_per_message: %d\n"+
		"agents:\n  max_concurrent: %d\nsandbox:\n  require: %v\n", readers*benchReads+10, max(readers, 1), sandboxRequired())
	if err := os.MkdirAll(filepath.Join(ws, ".opx"), 0o755); err != nil {
		b.Fatal(err)
	}
	for name, text := range map[string]string{"config.yaml": cfg, "bench.json": subAgentBenchTranscript(readers)} {
		if err := os.WriteFile(filepath.Join(ws, ".opx", name), []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	e := &benchEngine{b: b, bin: bin, ws: ws, state: state, env: append(os.Environ(), "XDG_STATE_HOME="+state, "NO_COLOR=1", "OPX_LEDGER=")}
	e.mgr = exec.Command(bin, "start", "--workspace", ws)
	e.mgr.Env = e.env
	if err := e.mgr.Start(); err != nil {
		b.Fatal(err)
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			e.mgr.Process.Kill()
			e.mgr.Wait()
			b.Fatal("the agent never came up")
		}
		if dirs, _ := filepath.Glob(filepath.Join(state, "opx", "*")); len(dirs) == 1 {
			if _, _, err := registry.Lookup(registry.Dir(dirs[0])); err == nil {
				if ok, _ := statusJSON(bin, e.env, ws); ok {
					return e
				}
			}
		}
	}
}

// send sends one message in a new session and waits for the answer.
func (e *benchEngine) send(msg string) {
	e.b.Helper()
	cmd := exec.Command(e.bin, "send", "--workspace", e.ws, msg)
	cmd.Env = e.env
	if out, err := cmd.CombinedOutput(); err != nil {
		e.b.Fatalf("opx send %q: %v\n%s", msg, err, out)
	}
}

// stop stops the engine, verifies its ledger strictly and returns the
// ledger's entries.
func (e *benchEngine) stop() []ledger.Entry {
	e.b.Helper()
	cmd := exec.Command(e.bin, "stop", "--workspace", e.ws)
	cmd.Env = e.env
	if out, err := cmd.CombinedOutput(); err != nil {
		e.b.Fatalf("opx stop: %v\n%s", err, out)
	}
	e.mgr.Wait()
	path := filepath.Join(registryDir(e.b, e.state), "ledger.db")
	ledgertest.MustVerify(e.b, path, event.StrictOptions())
	l, err := ledger.OpenReadOnly(path)
	if err != nil {
		e.b.Fatal(err)
	}
	defer l.Close()
	var out []ledger.Entry
	if err := l.Range(0, ^uint64(0), func(en ledger.Entry) error {
		out = append(out, en)
		return nil
	}); err != nil {
		e.b.Fatal(err)
	}
	return out
}

func registryDir(b *testing.B, state string) string {
	dirs, _ := filepath.Glob(filepath.Join(state, "opx", "*"))
	if len(dirs) != 1 {
		b.Fatalf("state directories %v", dirs)
	}
	return dirs[0]
}

// benchEntry is what the benchmarks read of an entry.
type benchEntry struct {
	ledger.Entry
	at   time.Time
	data struct {
		SubAgentID   string `json:"subagent_id"`
		CallID       string `json:"call_id"`
		Tool         string `json:"tool"`
		CanaryStatus string `json:"canary_status"`
		TokenValid   bool   `json:"token_valid"`
	}
}

func decodeBench(b *testing.B, es []ledger.Entry) []benchEntry {
	out := make([]benchEntry, len(es))
	for i, en := range es {
		out[i].Entry = en
		var err error
		if out[i].at, err = en.Time(); err != nil {
			b.Fatal(err)
		}
		_ = json.Unmarshal(en.Data, &out[i].data)
	}
	return out
}

// readyTimes returns, for the session's agent ("") and each sub-agent,
// the time from its process's agent.spawned to its agent.ready, checking
// every agent was sandboxed when the sandbox is required.
func readyTimes(b *testing.B, es []benchEntry) map[string]time.Duration {
	spawned := map[string]time.Time{}
	out := map[string]time.Duration{}
	for _, en := range es {
		switch en.Type {
		case event.TypeAgentSpawned:
			spawned[en.data.SubAgentID] = en.at
		case event.TypeAgentReady:
			if !en.data.TokenValid {
				continue
			}
			if sandboxRequired() && en.data.CanaryStatus != event.CanarySandboxed {
				b.Fatalf("agent %q ready with canary %q", en.data.SubAgentID, en.data.CanaryStatus)
			}
			out[en.data.SubAgentID] = en.at.Sub(spawned[en.data.SubAgentID])
		}
	}
	return out
}

func median(d []time.Duration) time.Duration {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return d[len(d)/2]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// BenchmarkSubAgentSpawnToReady: each iteration starts an engine (its
// agent sandboxed, canary checked) and has its agent spawn one sub-agent
// and wait for its answer. Figures (medians over the iterations): the
// sub-agent's spawn call (exec.started of spawn_agent) to its agent.ready,
// which includes the engine's bookkeeping, the fork, the sandbox and the
// canary (target < 150 ms); the same from the sub-agent process's
// agent.spawned; and, beside them, the main agent's agent.spawned to
// agent.ready in the same engine run.
func BenchmarkSubAgentSpawnToReady(b *testing.B) {
	bin := buildOpx(b)
	var call, sub, main []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e := startBenchEngine(b, bin, 1)
		e.send("bench spawn one")
		es := decodeBench(b, e.stop())
		ready := readyTimes(b, es)
		var spawnCall time.Time
		var id string
		for _, en := range es {
			switch {
			case en.Type == event.TypeExecStarted && en.data.Tool == "spawn_agent":
				spawnCall = en.at
			case en.Type == event.TypeSubAgentSpawned:
				id = en.data.SubAgentID
			case en.Type == event.TypeAgentReady && en.data.SubAgentID != "" && en.data.TokenValid:
				call = append(call, en.at.Sub(spawnCall))
			}
		}
		if id == "" || len(ready) != 2 {
			b.Fatalf("sub-agent %q, ready agents %v", id, ready)
		}
		sub, main = append(sub, ready[id]), append(main, ready[""])
	}
	b.StopTimer()
	b.ReportMetric(ms(median(call)), "spawn-call-to-ready-ms")
	b.ReportMetric(ms(median(sub)), "sub-process-to-ready-ms")
	b.ReportMetric(ms(median(main)), "main-process-to-ready-ms")
	b.ReportMetric(float64(median(call))/float64(median(main)), "sub-call/main")
}

// BenchmarkSubAgentsParallelReads: each iteration starts an engine and
// sends two messages, in alternating order: one whose agent spawns ten
// sub-agents in one step, each reading 20 files (20 read_file calls, one
// step), and waits for all ten results; one whose agent reads the same
// 200 files itself, 20 a step. Figures (medians): each message's wall
// time, from client.message to the session agent's response_complete,
// and alone/parallel (above 1: the sub-agents finish sooner).
func BenchmarkSubAgentsParallelReads(b *testing.B) {
	const readers = 10
	bin := buildOpx(b)
	var parallel, alone []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e := startBenchEngine(b, bin, readers)
		msgs := []string{"bench fan out", "bench alone"}
		if i%2 == 1 {
			msgs[0], msgs[1] = msgs[1], msgs[0]
		}
		for _, m := range msgs {
			e.send(m)
		}
		es := decodeBench(b, e.stop())
		start := map[string]time.Time{} // by session: client.message
		fanned := map[string]bool{}     // sessions that spawned
		subs, reads := 0, 0
		for _, en := range es {
			switch {
			case en.Type == event.TypeClientMessage:
				start[en.Session] = en.at
			case en.Type == event.TypeSubAgentSpawned:
				fanned[en.Session] = true
			case en.Type == event.TypeSubAgentCompleted:
				subs++
			case en.Type == event.TypeExecCompleted && en.data.Tool == "read_file":
				reads++
			case en.Type == event.TypeResponseComplete && en.data.SubAgentID == "" && fanned[en.Session]:
				parallel = append(parallel, en.at.Sub(start[en.Session]))
			case en.Type == event.TypeResponseComplete && en.data.SubAgentID == "":
				alone = append(alone, en.at.Sub(start[en.Session]))
			}
		}
		if subs != readers || reads != 2*readers*benchReads || len(parallel) != i+1 || len(alone) != i+1 {
			b.Fatalf("%d sub-agents completed, %d reads, %d/%d answers", subs, reads, len(parallel), len(alone))
		}
	}
	b.StopTimer()
	b.ReportMetric(ms(median(parallel)), "parallel-ms")
	b.ReportMetric(ms(median(alone)), "alone-ms")
	b.ReportMetric(float64(median(alone))/float64(median(parallel)), "alone/parallel")
}
