package undo_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/opx-dev/opx/chronicle"
	"github.com/opx-dev/opx/chronicle/chronicletest"
	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/engine/executor"
	"github.com/opx-dev/opx/engine/grpcapi"
	"github.com/opx-dev/opx/engine/llm"
	"github.com/opx-dev/opx/engine/undo"
	"github.com/opx-dev/opx/fixtures"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// The rollback crash test runs the real rollback (undo.Chronicle on a
// real workspace and bbolt ledger) in a child process, this test binary
// re-executed into TestRollbackCrashChild, whose workspace pauses after a
// chosen number of changes and tells the parent so; the parent SIGKILLs
// it there, so nothing in the child gets to clean up.
const (
	rbChildLedger = "OPX_TEST_ROLLBACK_CHILD_LEDGER"
	rbChildWS     = "OPX_TEST_ROLLBACK_CHILD_WS"
	rbChildAfter  = "OPX_TEST_ROLLBACK_CHILD_AFTER"
)

// TestRollbackCrashChild is the child; it does nothing when run as a
// test.
func TestRollbackCrashChild(t *testing.T) {
	path := os.Getenv(rbChildLedger)
	if path == "" {
		return
	}
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "rollback child:", err)
		os.Exit(2)
	}
	after, err := strconv.Atoi(os.Getenv(rbChildAfter))
	if err != nil {
		fail(err)
	}
	l, err := ledger.Open(path, ledger.Options{})
	if err != nil {
		fail(err)
	}
	ws := os.Getenv(rbChildWS)
	w, err := executor.OpenWorkspace(ws)
	if err != nil {
		fail(err)
	}
	fsys := &chronicletest.PausingFS{Workspace: undo.WorkspaceFS(w), After: after, Pause: chronicletest.Block}
	chron := undo.NewChronicle(fsys, engine.NewRecorder(l), chronicle.Retention{})
	chron.SetDir(ws)
	_, err = chron.Rollback(context.Background(), undo.RollbackRequest{Session: "s1"})
	fail(fmt.Errorf("the rollback returned (%v) instead of pausing", err))
}

// runRollbackChild runs the child until it pauses after `after` changes,
// then kills it with SIGKILL.
func runRollbackChild(t *testing.T, ledgerPath, ws string, after int) {
	t.Helper()
	chronicletest.RunPausingChild(t, "TestRollbackCrashChild", []string{rbChildLedger + "=" + ledgerPath, rbChildWS + "=" + ws, rbChildAfter + "=" + strconv.Itoa(after)}, nil)
}

// TestChronicle_Rollback_KilledThenRecovered kills a session rollback of
// many files before its first change, part way, and after its last change
// but before its outcome. Each time: the plan (every path and the state
// it writes) was durable; strict verify fails at the plan's seq; an
// engine that starts records, before engine.started, an interrupted
// chronicle.rollback whose post-states match the disk exactly; strict
// verify passes; and rolling the session back again finishes the job
// without --force.
func TestChronicle_Rollback_KilledThenRecovered(t *testing.T) {
	const nFiles = 100
	for _, tc := range []struct {
		name  string
		after func(steps int) int
	}{
		{"before any change", func(int) int { return 0 }},
		{"part way", func(steps int) int { return steps / 2 }},
		{"after every change", func(steps int) int { return steps }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{"data/old.txt": "old\n"}
			for i := 0; i < nFiles; i++ {
				files[fmt.Sprintf("data/f%04d.txt", i)] = fmt.Sprintf("original %d\n", i)
			}
			f := newChronFixture(t, files, chronicle.Retention{})
			before := f.tree(t)
			f.call(t, "rewrite_all", `{}`)
			rewritten := f.tree(t)
			dry, err := f.rollback(t, undo.RollbackRequest{Session: "s1", DryRun: true})
			if err != nil || len(dry.Steps) != nFiles+3 {
				t.Fatalf("dry run: %d steps, %v", len(dry.Steps), err)
			}
			f.l.Close()
			f.l = nil

			runRollbackChild(t, f.path, f.ws, tc.after(len(dry.Steps)))

			l, err := ledger.Open(f.path, ledger.Options{})
			if err != nil {
				t.Fatal(err)
			}
			f.l = l
			plans, err := chronicle.OpenPlans(l)
			if err != nil || len(plans) != 1 {
				t.Fatalf("open plans %v, %v; want the child's", plans, err)
			}
			plan := plans[0]
			if len(plan.Files) != len(dry.Steps) || plan.Session != "s1" || plan.Workspace != f.ws {
				t.Fatalf("plan %+v, want the %d steps of the dry run in %s", plan.RollbackStarted, len(dry.Steps), f.ws)
			}
			for i, s := range dry.Steps {
				want := s.To
				want.Path = s.Path
				if got := plan.Files[i]; got != want {
					t.Errorf("plan file %d = %+v, want %+v", i, got, want)
				}
			}
			rep, err := l.Verify(event.StrictOptions())
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Failures) != 1 || rep.Failures[0].Seq != plan.Seq || rep.Failures[0].Kind != ledger.KindCausality {
				t.Fatalf("before recovery: failures %v, want one causality failure at the plan (%d)", rep.Failures, plan.Seq)
			}

			// What the disk holds, by the test's own hashing.
			want := map[string]event.PostState{}
			restored := 0
			for _, s := range dry.Steps {
				want[s.Path] = chronicletest.Measured(t, f.ws, s.Path)
				if want[s.Path] == chronicle.PostOf(event.FileState{Path: s.Path, State: s.To.State, Mode: s.To.Mode, Blob: s.To.Blob, Target: s.To.Target}) {
					restored++
				}
			}
			switch after := tc.after(len(dry.Steps)); {
			case after == 0 && restored != 0, after > 0 && restored != after:
				t.Fatalf("%d paths in their planned state, want %d", restored, after)
			}

			// A kill inside a batch write, between its fsync and its
			// renames, leaves the batch's temporary files: one such,
			// named as the workspace names them.
			tmp := filepath.Join(f.ws, "data", ".opx-tmp-0123456789ab")
			if err := os.WriteFile(tmp, []byte("original 1\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			// A file of the user's that only looks like one stays.
			decoy := filepath.Join(f.ws, "data", ".opx-tmp-notes")
			if err := os.WriteFile(decoy, []byte("mine\n"), 0o644); err != nil {
				t.Fatal(err)
			}

			startEngineOn(t, l, f.ws)
			out, started := recoveredOutcome(t, l, plan.Seq)
			if _, err := os.Lstat(tmp); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(out.Error, "removed 1 temporary file(s)") {
				t.Errorf("temporary file: %v; outcome says %q", err, out.Error)
			}
			if !out.Interrupted || out.Session != "s1" || out.PreSnapshot != plan.PreSnapshot || out.Error == "" {
				t.Errorf("outcome %+v, want an interrupted rollback of s1", out)
			}
			if started == 0 {
				t.Errorf("no engine.started after the recovered outcome")
			}
			if len(out.Post) != len(want) {
				t.Errorf("outcome has %d post-states, want %d", len(out.Post), len(want))
			}
			for _, p := range out.Post {
				if p != want[p.Path] {
					t.Errorf("post-state %+v, disk holds %+v", p, want[p.Path])
				}
			}
			if len(out.Files) != restored {
				t.Errorf("outcome lists %d restored paths, the disk holds %d", len(out.Files), restored)
			}
			if rep, err := l.Verify(event.StrictOptions()); err != nil || !rep.OK {
				t.Fatalf("after recovery: %v %v", err, rep.Failures)
			}
			if err := os.Remove(decoy); err != nil {
				t.Errorf("the user's .opx-tmp-notes: %v", err)
			}

			// With no conflict (the recovered post-states are what opx
			// left), the session rolls back the rest; or, part way, the
			// interrupted rollback is undone through its pre-snapshot.
			w, err := executor.OpenWorkspace(f.ws)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			chron := undo.NewChronicle(undo.WorkspaceFS(w), engine.NewRecorder(l), chronicle.Retention{})
			req, wantTree := undo.RollbackRequest{Session: "s1"}, before
			if tc.name == "part way" {
				req, wantTree = undo.RollbackRequest{Snapshot: plan.PreSnapshot}, rewritten
			}
			again, err := chron.Rollback(context.Background(), req)
			if err != nil {
				t.Fatalf("rollback %+v after recovery: %v (%s)", req, err, again.ErrorKind)
			}
			if got := f.tree(t); got != wantTree {
				t.Errorf("workspace after rollback %+v is not the state it restores", req)
			}
		})
	}
}

// startEngineOn starts an engine on l and stops it at once: what an
// engine records at start, and nothing else.
func startEngineOn(t *testing.T, l *ledger.Ledger, ws string) {
	t.Helper()
	tr, err := llm.ParseTranscript(fixtures.DefaultTranscript)
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(engine.Options{Services: grpcapi.Register, Workspace: ws, Ledger: l, Provider: llm.NewScripted(tr), ClientToken: clientToken,
		Version: "test", Policy: "read-only", Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := e.Run(ctx); err != nil {
		t.Fatal(err)
	}
}

// recoveredOutcome returns the chronicle.rollback naming plan and the
// seq of the first engine.started after it (0 if none).
func recoveredOutcome(t *testing.T, l *ledger.Ledger, plan uint64) (*event.Rollback, uint64) {
	t.Helper()
	var out *event.Rollback
	var started uint64
	err := l.Range(plan+1, ^uint64(0), func(e ledger.Entry) error {
		switch {
		case e.Type == event.TypeRollback && out == nil:
			p, err := event.Decode(e)
			if err != nil {
				return err
			}
			if r := p.(*event.Rollback); r.Plan == plan {
				out = r
			}
		case e.Type == event.TypeEngineStarted && out != nil && started == 0:
			started = e.Seq
		case e.Type == event.TypeEngineStarted && out == nil:
			return fmt.Errorf("engine.started at %d before the outcome of plan %d", e.Seq, plan)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if out == nil {
		t.Fatalf("no chronicle.rollback names plan %d", plan)
	}
	if strings.TrimSpace(out.Error) == "" {
		t.Errorf("the recovered outcome does not say it was interrupted")
	}
	return out, started
}
