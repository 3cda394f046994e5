package undo_test

// Chronicle benchmarks, each beside its baseline in the same run:
//
//	go test -run '^$' -bench 'WorkspaceSnapshot|SnapshotRollback' -benchtime 20x ./engine/
//
// WorkspaceSnapshot_Unchanged10k: one iteration is one incremental
// workspace snapshot of an unchanged 10,000-file tree (walk, stat cache,
// manifest, hash, the chronicle.snapshot entry appended) and, as the
// baseline, one `git status --porcelain` of the same tree.
//
// SnapshotRollback_100MB: one iteration snapshots a 100 MB file before a
// tool appends to it (content read, hashed, compressed into the ledger,
// fsynced) and rolls it back (blob read, hash-checked, written atomically,
// fsynced); the baseline is `cp big big.bak` then `cp big.bak big`.

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/opx-dev/opx/chronicle"
	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/engine/executor"
	"github.com/opx-dev/opx/engine/judge"
	"github.com/opx-dev/opx/engine/undo"
	"github.com/opx-dev/opx/ledger"
)

func BenchmarkWorkspaceSnapshot_Unchanged10k(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("git not installed: no baseline")
	}
	ws := b.TempDir()
	for d := range 100 {
		dir := filepath.Join(ws, fmt.Sprintf("pkg%03d", d))
		os.MkdirAll(dir, 0o755)
		for f := range 100 {
			content := fmt.Sprintf("package pkg%03d\n\n// File %d of the benchmark tree.\nfunc F%d() int { return %d }\n", d, f, f, d*f)
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.go", f)), []byte(content), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	git := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = ws
		// GIT_OPTIONAL_LOCKS=0: status must not rewrite the index, or the
		// tree would not be unchanged for the next snapshot.
		cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0", "GIT_AUTHOR_NAME=b", "GIT_AUTHOR_EMAIL=b@b", "GIT_COMMITTER_NAME=b", "GIT_COMMITTER_EMAIL=b@b")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	git("add", "-A")
	git("-c", "gc.auto=0", "commit", "-q", "-m", "tree")
	// Past the racy window, so both git and opx trust their stat caches.
	time.Sleep(1100 * time.Millisecond)

	w, err := executor.OpenWorkspace(ws)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	l, err := ledger.Create(filepath.Join(b.TempDir(), "ledger.db"), ledger.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	chron := undo.NewChronicle(undo.WorkspaceFS(w), engine.NewRecorder(l), chronicle.Retention{})
	ctx := context.Background()
	snapshot := func(i int) {
		chron.Lock()
		defer chron.Unlock()
		snap, refusal, err := chron.SnapshotWorkspace(ctx, "s", "", fmt.Sprint("c", i), "execute_command")
		if err != nil || refusal != "" || len(snap.Tree.Items) < 10100 {
			b.Fatalf("snapshot: %v %s", err, refusal)
		}
	}
	snapshot(-1) // cold: stores every file once
	if err := l.Sync(ctx); err != nil {
		b.Fatal(err)
	}
	git("status", "--porcelain") // warm git's index too

	var ours, base time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// Alternate which goes first, so neither always gets a warm cache.
		run := []func(){func() {
			t := time.Now()
			snapshot(i)
			ours += time.Since(t)
		}, func() {
			t := time.Now()
			git("status", "--porcelain")
			base += time.Since(t)
		}}
		run[i%2]()
		run[1-i%2]()
	}
	b.StopTimer()
	b.ReportMetric(float64(ours.Nanoseconds())/float64(b.N), "opx-ns/snapshot")
	b.ReportMetric(float64(base.Nanoseconds())/float64(b.N), "git-status-ns")
	b.ReportMetric(float64(ours)/float64(base), "opx/git")
}

// bigTool appends a line to big.bin: a mutating tool that names its path.
type bigTool struct{ ws string }

func (t *bigTool) Tools() []executor.ToolDef {
	return []executor.ToolDef{{Name: "append_big", Description: "appends", InputSchema: json.RawMessage(`{}`), Group: "files", Mutating: true}}
}
func (t *bigTool) Touches(executor.Call) ([]string, error) { return []string{"big.bin"}, nil }
func (t *bigTool) Execute(context.Context, executor.Call) executor.Result {
	f, err := os.OpenFile(filepath.Join(t.ws, "big.bin"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return executor.Errorf("%v", err)
	}
	defer f.Close()
	f.WriteString("one more line\n")
	return executor.Result{Content: "appended"}
}

func BenchmarkSnapshotRollback_100MB(b *testing.B) {
	ws := b.TempDir()
	big := filepath.Join(ws, "big.bin")
	// Text-like content (log lines with varying numbers): compressible,
	// as most workspace files are, but not trivially.
	r := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 0, 100<<20)
	for len(buf) < 100<<20 {
		buf = fmt.Appendf(buf, "2026-11-23T10:%02d:%02d.%06dZ worker=%d request=%x bytes=%d status=%d\n",
			r.IntN(60), r.IntN(60), r.IntN(1e6), r.IntN(64), r.Uint64(), r.IntN(1<<20), 200+r.IntN(4)*100)
	}
	if err := os.WriteFile(big, buf[:100<<20], 0o644); err != nil {
		b.Fatal(err)
	}
	w, err := executor.OpenWorkspace(ws)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	l, err := ledger.Create(filepath.Join(b.TempDir(), "ledger.db"), ledger.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	reg, _ := executor.NewRegistry(&bigTool{ws: ws})
	rec := engine.NewRecorder(l)
	chron := undo.NewChronicle(undo.WorkspaceFS(w), rec, chronicle.Retention{})
	p := &engine.Pipeline{Recorder: rec, Tools: reg, Chronicle: chron, Evaluator: allowEverything{}}
	ctx := context.Background()
	cp := func(from, to string) {
		if out, err := exec.Command("cp", from, to).CombinedOutput(); err != nil {
			b.Fatalf("cp: %v %s", err, out)
		}
	}
	var ours, base time.Duration
	b.SetBytes(100 << 20)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t := time.Now()
		cp(big, big+".bak")
		cp(big+".bak", big)
		base += time.Since(t)
		os.Remove(big + ".bak")

		t = time.Now()
		if out, err := p.Handle(ctx, "s", "", "m", fmt.Sprint("c", i), "append_big", "{}"); err != nil || out.IsError {
			b.Fatalf("%+v %v", out, err)
		}
		h, _ := l.Head()
		var snap uint64
		l.Range(h.Seq-3, h.Seq, func(e ledger.Entry) error {
			if e.Type == "chronicle.snapshot" {
				snap = e.Seq
			}
			return nil
		})
		if _, err := chron.Rollback(ctx, undo.RollbackRequest{Snapshot: snap}); err != nil {
			b.Fatal(err)
		}
		ours += time.Since(t)
	}
	b.StopTimer()
	b.ReportMetric(float64(ours.Nanoseconds())/float64(b.N), "opx-ns/snapshot+rollback")
	b.ReportMetric(float64(base.Nanoseconds())/float64(b.N), "cp-ns/backup+restore")
	b.ReportMetric(float64(ours)/float64(base), "opx/cp")
}

// allowEverything is an Evaluator that allows every call, so the
// benchmark measures Chronicle and not Shield.
type allowEverything struct{}

func (allowEverything) PolicyHash() ledger.Hash { return ledger.Sum([]byte("allow everything")) }
func (allowEverything) Evaluate(context.Context, judge.Proposal) []judge.Verdict {
	return []judge.Verdict{{Decision: "allow", Tier: 0, Rule: "bench", Reason: "benchmark"}}
}
