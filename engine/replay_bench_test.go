package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/opx-dev/opx/engine/redrive"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/replay/rerun"
)

// benchTranscript answers each "batch" message with five rounds of five
// read_file calls and then a text answer: 25 tool calls and 6 model calls
// a message (the agent makes at most 25 model calls a message).
func benchTranscript() string {
	type call struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	type step struct {
		Text      string `json:"text,omitempty"`
		ToolCalls []call `json:"tool_calls,omitempty"`
	}
	var steps []step
	for r := 0; r < 5; r++ {
		var calls []call
		for c := 0; c < 5; c++ {
			calls = append(calls, call{"read_file", fmt.Sprintf(`{"path": "src/f%02d.txt"}`, r*5+c)})
		}
		steps = append(steps, step{ToolCalls: calls})
	}
	steps = append(steps, step{Text: "Read all 25 files; the last says: {{.LastResult}}"})
	b, _ := json.Marshal(map[string]any{"model": "bench-1", "turns": []any{map[string]any{"match": "batch", "steps": steps}}})
	return string(b)
}

// BenchmarkRerun_100ToolCalls records a live session of 100 tool calls
// (four messages of 25 read_file calls, Shield under the default policy,
// real executors, an fsyncing ledger) and reruns it. The live run is the
// baseline beside it: each iteration records a fresh session (untimed)
// and reruns it (timed). Metrics: the session's recorded wall time (its
// first to last entry), the rerun's (reading the record, engine start to
// stop with the agent, comparing), and their ratio.
//
//	go test ./engine -run '^$' -bench Rerun_100ToolCalls -benchtime 10x
func BenchmarkRerun_100ToolCalls(b *testing.B) {
	files := map[string]string{}
	for i := 0; i < 25; i++ {
		files[fmt.Sprintf("src/f%02d.txt", i)] = strings.Repeat(fmt.Sprintf("line %d of file %d\n", i, i), 40)
	}
	spec := recordSpec{transcript: benchTranscript(), files: files, fsync: true,
		messages: []string{"batch one", "batch two", "batch three", "batch four"}}
	var recorded, rerunTime time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		r := recordSession(b, spec)
		l, err := ledger.OpenReadOnly(r.path)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		rec, err := rerun.Load(l, r.session)
		if err != nil {
			b.Fatal(err)
		}
		rep, err := redrive.Rerun(context.Background(), redrive.RerunConfig{Recording: rec, SpawnAgent: inProcessAgent(b), TempDir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		rerunTime += time.Since(start)
		b.StopTimer()
		l.Close()
		if !rep.Identical || len(rec.Proposals) != 100 {
			b.Fatalf("rerun of %d tool calls: identical %v, %+v", len(rec.Proposals), rep.Identical, rep.Divergence)
		}
		recorded += rep.Recorded
		b.StartTimer()
	}
	n := float64(b.N)
	b.ReportMetric(float64(recorded.Microseconds())/n/1000, "recorded-ms")
	b.ReportMetric(float64(rerunTime.Microseconds())/n/1000, "rerun-ms")
	b.ReportMetric(float64(rerunTime)/float64(recorded), "rerun/recorded")
}
