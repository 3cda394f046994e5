package projection_test

// Rebuild of every projection beside a verify of the same ledger, in the
// same run:
//
//	go test -run '^$' -bench Rebuild -benchtime 1x -count 3 ./replay/projection/
//
// The ledger is 1,000,000 entries of engine-shaped turns (session
// created, user message, model request and response, tokens, a proposal,
// two verdicts, a snapshot every fourth turn, execution, result, answer),
// built once and cached in $TMPDIR/opx-projection-bench-v1-<n>/ (delete it
// to rebuild). One b.N iteration is one rebuild and one verify, after one
// untimed rebuild that faults the file in.

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/replay/projection"
)

var benchEntries = flag.Int("projbench.entries", 1000000, "entries in the rebuild benchmark's ledger")

// benchLedger returns the cached benchmark ledger, building it if needed.
func benchLedger(b *testing.B) string {
	b.Helper()
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("opx-projection-bench-v1-%d", *benchEntries))
	path := filepath.Join(dir, "ledger.db")
	if _, err := os.Stat(path); err == nil {
		return path
	}
	os.MkdirAll(dir, 0o700)
	tmp := path + ".building"
	os.Remove(tmp)
	l, err := ledger.Create(tmp, ledger.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	h := ledger.Sum([]byte("x")).String()
	body := []byte("x")
	n, turn := 0, 0
	var recs []ledger.Record
	add := func(session string, p event.Payload, blobs ...[]byte) {
		recs = append(recs, event.MustRecord(session, p, blobs...))
		n++
	}
	for n < *benchEntries {
		s := fmt.Sprintf("ses_%06d", turn/50)
		if turn%50 == 0 {
			add(s, &event.SessionCreated{Mode: "normal", Title: "benchmark session"})
		}
		msg, call := fmt.Sprintf("msg_%d", turn), fmt.Sprintf("call_%d", turn)
		add(s, &event.ClientMessage{MessageID: msg, Content: "run the tests and fix what fails", Client: "bench"})
		add(s, &event.LLMRequest{RequestID: "r" + msg, MessageID: msg, Provider: "scripted", Model: "m1", Blob: h, Size: 1}, body)
		add(s, &event.LLMResponse{RequestID: "r" + msg, Provider: "scripted", Model: "m1", Blob: h, Size: 1, Status: 200, Attempts: 1,
			LatencyMS: 120, ToolCalls: []event.ToolCall{{CallID: call, Tool: "write_file", Arguments: "{}"}},
			Usage: event.Usage{InputTokens: 900, OutputTokens: 40, TotalTokens: 940}}, body)
		add(s, &event.AgentTokens{MessageID: msg, Text: "I will fix the failing test now.", Count: 8})
		add(s, &event.ToolProposed{MessageID: msg, CallID: call, Tool: "write_file", Arguments: `{"content":"x","path":"a.go"}`, ActionHash: h, Mutating: true})
		add(s, &event.ShieldVerdict{CallID: call, Decision: "allow", Tier: 0, Rule: "policy:workspace-edits", Reason: "allowed", ActionHash: h, PolicyHash: h})
		add(s, &event.ShieldVerdict{CallID: call, Decision: "allow", Tier: 1, Rule: "heuristics:none", Reason: "no heuristic matched", ActionHash: h, PolicyHash: h})
		if turn%4 == 0 {
			add(s, &event.Snapshot{CallID: call, Tool: "write_file", Kind: event.KindFiles,
				Files: []event.FileState{{Path: fmt.Sprintf("pkg/f%d.go", turn%100), State: event.StateFile, Mode: 0o644, Size: 1, Blob: h}}}, body)
		}
		add(s, &event.ExecStarted{CallID: call, Tool: "write_file", ActionHash: h})
		add(s, &event.ExecCompleted{CallID: call, Tool: "write_file", Result: "wrote 1 byte", Size: 12, DurationMS: 2,
			Post: []event.PostState{{Path: "a.go", Hash: h, Mode: 0o644}}})
		add(s, &event.ToolResult{CallID: call, Content: "wrote 1 byte", Size: 12})
		add(s, &event.ResponseComplete{MessageID: msg, Content: "Fixed.", Thoughts: []event.Thought{}, Usage: event.Usage{InputTokens: 900, OutputTokens: 40, TotalTokens: 940}})
		turn++
		if len(recs) >= 4096 {
			if _, err := l.Append(ctx, ledger.Async, recs...); err != nil {
				b.Fatal(err)
			}
			recs = recs[:0]
		}
	}
	if _, err := l.Append(ctx, ledger.Sync, recs...); err != nil {
		b.Fatal(err)
	}
	if err := l.Close(); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		b.Fatal(err)
	}
	return path
}

func BenchmarkRebuild(b *testing.B) {
	path := benchLedger(b)
	l, err := ledger.Open(path, ledger.Options{Projections: projection.All(), NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	h, _ := l.Head()
	doRebuild := func() {
		rep, err := l.RebuildProjections()
		if err != nil || rep.Entries != h.Seq+1 {
			b.Fatalf("rebuild: %+v %v", rep, err)
		}
	}
	doVerify := func() {
		vr, err := l.Verify(ledger.VerifyOptions{})
		if err != nil || !vr.OK {
			b.Fatalf("verify: %v %v", err, vr.Err())
		}
	}
	// Warm: the first pass over a memory-mapped file pays its page
	// faults, whichever of the two runs first.
	doRebuild()
	var rebuild, verify time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// Alternate which goes first.
		steps := []func(){func() { t := time.Now(); doRebuild(); rebuild += time.Since(t) },
			func() { t := time.Now(); doVerify(); verify += time.Since(t) }}
		steps[i%2]()
		steps[1-i%2]()
	}
	b.StopTimer()
	n := float64(h.Seq+1) * float64(b.N)
	b.ReportMetric(n/rebuild.Seconds(), "rebuild-entries/s")
	b.ReportMetric(n/verify.Seconds(), "verify-entries/s")
	b.ReportMetric(rebuild.Seconds()/verify.Seconds(), "rebuild/verify")
}
