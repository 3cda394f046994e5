package cli_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/opx-dev/opx/chronicle"
	"github.com/opx-dev/opx/chronicle/chronicletest"
	"github.com/opx-dev/opx/cli"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// An offline rollback (opx rollback with no engine) killed part way: the
// child is this test binary re-executed into TestRollbackCrashChild_Offline,
// running `opx rollback --session` in-process on a workspace that pauses
// after a chosen number of changes; the parent SIGKILLs it there.
const (
	offlineChildArgs  = "OPX_TEST_OFFLINE_ROLLBACK_ARGS"
	offlineChildAfter = "OPX_TEST_OFFLINE_ROLLBACK_AFTER"
)

// TestRollbackCrashChild_Offline is the child; it does nothing when run
// as a test.
func TestRollbackCrashChild_Offline(t *testing.T) {
	args := os.Getenv(offlineChildArgs)
	if args == "" {
		return
	}
	after, err := strconv.Atoi(os.Getenv(offlineChildAfter))
	if err != nil {
		fmt.Fprintln(os.Stderr, "offline rollback child:", err)
		os.Exit(2)
	}
	cli.SetRollbackFSForTest(func(w chronicle.Workspace) chronicle.Workspace {
		return &chronicletest.PausingFS{Workspace: w, After: after, Pause: chronicletest.Block}
	})
	app := cli.NewApp()
	var out bytes.Buffer
	app.Writer, app.ErrWriter = &out, os.Stderr
	err = app.Run(append([]string{"opx"}, strings.Split(args, "\n")...))
	fmt.Fprintf(os.Stderr, "offline rollback child: the rollback returned (%v) instead of pausing\n%s", err, out.String())
	os.Exit(2)
}

// TestRollback_Offline_KilledThenRecovered: the plan of an offline
// rollback is durable before its first change; killed part way, strict
// verify fails (exit 4) at the plan; the next command that opens the
// ledger for writing (opx ledger note, or opx rollback itself) records
// what each planned path holds, measured from disk, as an interrupted
// chronicle.rollback; verify passes; and opx rollback --session finishes
// the job without --force.
func TestRollback_Offline_KilledThenRecovered(t *testing.T) {
	t.Run("recovered by ledger note", func(t *testing.T) { offlineKilledThenRecovered(t, true) })
	t.Run("recovered by rollback", func(t *testing.T) { offlineKilledThenRecovered(t, false) })
}

func offlineKilledThenRecovered(t *testing.T, byNote bool) {
	files := map[string]string{"old.txt": "old\n"}
	var calls [][2]string
	for i := 0; i < 30; i++ {
		p := fmt.Sprintf("src/f%02d.txt", i)
		files[p] = fmt.Sprintf("original %d\n", i)
		calls = append(calls, [2]string{"write_file", fmt.Sprintf(`{"path":%q,"content":"changed %d\n"}`, p, i)})
	}
	calls = append(calls, [2]string{"write_file", `{"path":"new.txt","content":"new\n"}`}, [2]string{"delete_file", `{"path":"old.txt"}`})
	w := newSnapWorld(t, files, calls...)
	args := []string{"rollback", "--session", "ses_1", "--ledger", w.ledger, "--workspace", w.ws}

	chronicletest.RunPausingChild(t, "TestRollbackCrashChild_Offline",
		[]string{offlineChildArgs + "=" + strings.Join(args, "\n"), offlineChildAfter + "=15", "OPX_LEDGER="}, nil)

	// The plan is on record, with no outcome; strict verify says so.
	ro, err := ledger.OpenReadOnly(w.ledger)
	if err != nil {
		t.Fatal(err)
	}
	plans, err := chronicle.OpenPlans(ro)
	ro.Close()
	if err != nil || len(plans) != 1 || len(plans[0].Files) != 32 {
		t.Fatalf("open plans %+v, %v; want one of 32 paths", plans, err)
	}
	plan := plans[0]
	r := w.run(t, "ledger", "verify", "--strict")
	r.wantCode(t, cli.ExitIntegrity)
	r.wantOut(t, fmt.Sprintf("seq %d", plan.Seq), "causality", "no outcome")

	if byNote {
		r = run(t, append(args, "--dry-run")...)
		r.wantErr(t, fmt.Sprintf("the rollback planned at entry %d was interrupted and what it left is not recorded yet", plan.Seq))
	}

	want := map[string]event.PostState{}
	for _, f := range plan.Files {
		want[f.Path] = chronicletest.Measured(t, w.ws, f.Path)
	}
	recovery := args
	if byNote {
		recovery = []string{"ledger", "note", "looked after the crash", "--ledger", w.ledger}
	}
	r = run(t, recovery...)
	r.wantCode(t, cli.ExitOK)
	r.wantErr(t, fmt.Sprintf("the rollback planned at entry %d was interrupted", plan.Seq))

	l, err := ledger.OpenReadOnly(w.ledger)
	if err != nil {
		t.Fatal(err)
	}
	var out *event.Rollback
	l.Range(plan.Seq+1, ^uint64(0), func(e ledger.Entry) error {
		if e.Type == event.TypeRollback {
			p, err := event.Decode(e)
			if err == nil && p.(*event.Rollback).Plan == plan.Seq {
				out = p.(*event.Rollback)
			}
		}
		return nil
	})
	l.Close()
	if out == nil || !out.Interrupted || len(out.Post) != len(want) || len(out.Files) != 15 {
		t.Fatalf("recovered outcome %+v, want an interrupted rollback with %d post-states, 15 restored", out, len(want))
	}
	for _, p := range out.Post {
		if p != want[p.Path] {
			t.Errorf("post-state %+v, disk holds %+v", p, want[p.Path])
		}
	}
	w.run(t, "ledger", "verify", "--strict").wantCode(t, cli.ExitOK)

	// The rest rolls back without --force.
	if byNote {
		run(t, args...).wantCode(t, cli.ExitOK)
	}
	for p, c := range files {
		if got := w.read(p); got != c {
			t.Errorf("%s = %q after the second rollback, want %q", p, got, c)
		}
	}
	if got := w.read("new.txt"); got != "<absent>" {
		t.Errorf("new.txt = %q, want absent", got)
	}
}

// TestImport_RefusesOpenRollbackPlan: an export whose last rollback plan
// has no outcome (here one naming /etc, as a hostile export could, so
// that a later engine start would go and measure there) is refused by
// import as an integrity failure, before anything is written.
func TestImport_RefusesOpenRollbackPlan(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src.db")
	l, err := ledger.Create(src, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	app := func(p event.Payload) uint64 {
		t.Helper()
		a, err := l.Append(context.Background(), ledger.Sync, event.MustRecord("", p))
		if err != nil {
			t.Fatal(err)
		}
		return a[0].Seq
	}
	pre := app(&event.Snapshot{CallID: "rollback-session-s", Tool: "rollback", Kind: event.KindFiles, Files: []event.FileState{{Path: "passwd", State: event.StateAbsent}}})
	plan := app(&event.RollbackStarted{Session: "s", Workspace: "/etc", PreSnapshot: pre, Files: []event.FileState{{Path: "passwd", State: event.StateAbsent}}})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "open.jsonl")
	run(t, "ledger", "export", "--ledger", src, "-o", out).wantCode(t, cli.ExitOK)
	dst := filepath.Join(dir, "imported.db")
	r := run(t, "ledger", "import", out, "--ledger", dst)
	r.wantCode(t, cli.ExitIntegrity)
	if !strings.Contains(r.stdout+r.stderr, fmt.Sprintf("seq %d", plan)) || !strings.Contains(r.stdout+r.stderr, "no outcome") {
		t.Errorf("import output does not name the open plan at %d:\n%s\n%s", plan, r.stdout, r.stderr)
	}
	if _, err := os.Stat(dst); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("import wrote %s: %v", dst, err)
	}
}
