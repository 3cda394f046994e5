package cli_test

// Replay of one session in a large signing ledger, proved against the
// latest signed checkpoint, beside the full strict verification
// (--full-verify, the path every replay took before) in the same run:
//
//	go test ./cli -run '^$' -bench ReplayOneSession -benchtime 3x
//
// The ledger is built once and cached in $TMPDIR/opx-review-bench-v1-<n>/
// (delete it to rebuild): engine-shaped turns in sessions of 50 turns
// (about 600 entries each), a signed checkpoint every 1000 entries, the
// last one a few hundred entries before the head. Target: <= 0.5 s per
// replay at 1,000,000 entries.

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opx-dev/opx/cli"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/tlog"
)

var (
	reviewBenchEntries  = flag.Int("reviewbench.entries", 1000000, "entries in the replay benchmark's ledger")
	reviewBenchBaseline = flag.Bool("reviewbench.baseline", true, "run the --full-verify baseline (false to profile the checkpoint path alone)")
)

// reviewBenchLedger returns the cached benchmark ledger, building it if
// needed, and a session in its middle.
func reviewBenchLedger(b *testing.B) (string, string) {
	return benchLedger(b, *reviewBenchEntries, 50)
}

// benchLedger returns the cached benchmark ledger of n entries in
// sessions of per turns (12 entries each), building it if needed, and a
// session in its middle.
func benchLedger(b *testing.B, n, per int) (string, string) {
	b.Helper()
	name := fmt.Sprintf("opx-review-bench-v1-%d", n)
	if per != 50 {
		name = fmt.Sprintf("opx-review-bench-v1-%d-%d", n, per)
	}
	dir := filepath.Join(os.TempDir(), name)
	path := filepath.Join(dir, "ledger.db")
	session := fmt.Sprintf("ses_%06d", n/(12*per)/2)
	if _, err := os.Stat(filepath.Join(dir, "complete")); err == nil {
		return path, session
	}
	os.RemoveAll(dir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	var signer *tlog.Signer
	l, err := ledger.Create(path, ledger.Options{NoSync: true,
		SignCheckpoint: func(th ledger.TreeHead) (string, error) { return signer.Sign(th.Size, th.Root) }})
	if err != nil {
		b.Fatal(err)
	}
	if signer, err = tlog.CreateKey(dir, tlog.Origin(l.ID())); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	h := ledger.Sum([]byte("x")).String()
	body := []byte("x")
	count, turn := 1, 0
	var recs []ledger.Record
	add := func(session string, p event.Payload, blobs ...[]byte) {
		recs = append(recs, event.MustRecord(session, p, blobs...))
		count++
	}
	flush := func() {
		if _, err := l.Append(ctx, ledger.Async, recs...); err != nil {
			b.Fatal(err)
		}
		recs = recs[:0]
	}
	add("", &event.EngineStarted{Version: "bench", PID: 1, Workspace: "/nonexistent/ws", ConfigHash: h, Policy: "p", PolicyHash: h, Provider: "scripted"})
	add("", &event.Key{VKey: signer.Verifier().String(), Reason: event.KeyCreated})
	next := 1000
	for count < n {
		s := fmt.Sprintf("ses_%06d", turn/per)
		if turn%per == 0 {
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
		add(s, &event.Snapshot{CallID: call, Tool: "write_file", Kind: event.KindFiles,
			Files: []event.FileState{{Path: fmt.Sprintf("pkg/f%d.go", turn%100), State: event.StateFile, Mode: 0o644, Size: 1, Blob: h}}}, body)
		add(s, &event.ExecStarted{CallID: call, Tool: "write_file", ActionHash: h})
		add(s, &event.ExecCompleted{CallID: call, Tool: "write_file", Result: "wrote 1 byte", Size: 12, DurationMS: 2,
			Post: []event.PostState{{Path: "a.go", Hash: h, Mode: 0o644}}})
		add(s, &event.ToolResult{CallID: call, Content: "wrote 1 byte", Size: 12})
		add(s, &event.ResponseComplete{MessageID: msg, Content: "Fixed.", Thoughts: []event.Thought{}, Usage: event.Usage{InputTokens: 900, OutputTokens: 40, TotalTokens: 940}})
		turn++
		if count >= next {
			flush()
			if _, err := l.Checkpoint(ctx, ledger.Async); err != nil {
				b.Fatal(err)
			}
			count++
			next += 1000
		}
	}
	flush()
	if err := l.Close(); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "complete"), []byte("ok\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	b.Logf("built %d-entry signing ledger in %s (%v)", count, dir, time.Since(start).Round(time.Millisecond))
	return path, session
}

// BenchmarkReplayOneSession: `opx replay SESSION` (proved against the
// latest signed checkpoint) against `opx replay SESSION --full-verify`
// (every entry verified strictly), alternating which goes first; one b.N
// iteration is one of each. Reports ms per replay of each and the speedup.
func BenchmarkReplayOneSession(b *testing.B) {
	path, session := reviewBenchLedger(b)
	replay := func(args ...string) time.Duration {
		app := cli.NewApp()
		var out bytes.Buffer
		app.Writer, app.ErrWriter = &out, &out
		start := time.Now()
		err := app.Run(append([]string{"opx", "replay", session, "--ledger", path}, args...))
		d := time.Since(start)
		if err != nil {
			b.Fatalf("replay %v: %v\n%s", args, err, out.String())
		}
		want := "verified: checkpoint at seq"
		if len(args) > 0 {
			want = "verified: every entry"
		}
		if !strings.Contains(out.String(), want) || !strings.Contains(out.String(), "turn 50") {
			b.Fatalf("replay %v printed:\n%s", args, out.String())
		}
		return d
	}
	replay() // fault the file in
	var fast, full time.Duration
	for i := 0; i < b.N; i++ {
		switch {
		case !*reviewBenchBaseline:
			fast += replay()
		case i%2 == 0:
			fast += replay()
			full += replay("--full-verify")
		default:
			full += replay("--full-verify")
			fast += replay()
		}
	}
	b.ReportMetric(float64(fast.Milliseconds())/float64(b.N), "ms/replay")
	if *reviewBenchBaseline {
		b.ReportMetric(float64(full.Milliseconds())/float64(b.N), "full-verify-ms/replay")
		b.ReportMetric(full.Seconds()/fast.Seconds(), "speedup")
	}
}
