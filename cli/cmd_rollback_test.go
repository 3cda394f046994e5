package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/opx-dev/opx/chronicle"
	"github.com/opx-dev/opx/cli"
	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/engine/executor"
	"github.com/opx-dev/opx/engine/judge"
	"github.com/opx-dev/opx/engine/undo"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/ledgertest"
	"github.com/opx-dev/opx/shield"
	bolt "go.etcd.io/bbolt"
)

// snapWorld is a workspace and the ledger of a session that changed it,
// written by the real pipeline (Shield, Chronicle, executors), closed.
type snapWorld struct {
	ws, ledger string
	snaps      []uint64 // in call order
}

// newSnapWorld runs calls (tool, JSON args) in session ses_1 on a
// workspace holding files.
func newSnapWorld(t *testing.T, files map[string]string, calls ...[2]string) *snapWorld {
	t.Helper()
	ws := t.TempDir()
	for p, c := range files {
		os.MkdirAll(filepath.Dir(filepath.Join(ws, p)), 0o755)
		if err := os.WriteFile(filepath.Join(ws, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w := &snapWorld{ws: ws, ledger: filepath.Join(t.TempDir(), "ledger.db")}
	l, err := ledger.Create(w.ledger, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rec := engine.NewRecorder(l)
	// An engine.started naming the workspace, as a real engine writes.
	if _, err := rec.Record(context.Background(), ledger.Sync, "", &event.EngineStarted{Version: "test", PID: 1, Workspace: ws,
		ConfigHash: ledger.Sum(nil).String(), Policy: "test", PolicyHash: ledger.Sum(nil).String(), Provider: "scripted", Model: "m"}); err != nil {
		t.Fatal(err)
	}
	x, err := executor.OpenWorkspace(ws)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	reg, _ := executor.NewRegistry(executor.NewFiles(x), executor.NewEdits(x))
	policy, _ := shield.ParsePolicy([]byte("version: 1\ndefault: allow\n"))
	p := &engine.Pipeline{Recorder: rec, Tools: reg, Chronicle: undo.NewChronicle(undo.WorkspaceFS(x), rec, chronicle.Retention{}),
		Evaluator: judge.ShieldEvaluator{S: shield.New(shield.Config{Workspace: ws, Home: "/home/nobody", Policy: policy})}}
	for i, c := range calls {
		out, err := p.Handle(context.Background(), "ses_1", "", "msg_1", fmt.Sprint("call_", i), c[0], c[1])
		if err != nil || out.IsError {
			t.Fatalf("%v: %+v %v", c, out, err)
		}
		h, _ := l.Head()
		l.Range(0, h.Seq, func(e ledger.Entry) error {
			if e.Type == event.TypeSnapshot && (len(w.snaps) == 0 || e.Seq > w.snaps[len(w.snaps)-1]) {
				w.snaps = append(w.snaps, e.Seq)
			}
			return nil
		})
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ledgertest.MustVerify(t, w.ledger, event.StrictOptions()) })
	return w
}

func (w *snapWorld) read(p string) string {
	b, err := os.ReadFile(filepath.Join(w.ws, p))
	if err != nil {
		return "<absent>"
	}
	return string(b)
}

func (w *snapWorld) run(t *testing.T, args ...string) result {
	t.Helper()
	return run(t, append(args, "--ledger", w.ledger)...)
}

var editCalls = [][2]string{
	{"write_file", `{"path":"notes.md","content":"one\ntwo\nthree\n"}`},
	{"edit_file", `{"path":"main.go","old":"return 1","new":"return 2"}`},
	{"delete_file", `{"path":"old.txt"}`},
}

var editFiles = map[string]string{"main.go": "package main\n\nfunc f() int {\n\treturn 1\n}\n", "old.txt": "old\n"}

func TestSnapshots_List(t *testing.T) {
	w := newSnapWorld(t, editFiles, editCalls...)
	r := w.run(t, "snapshots")
	r.wantCode(t, cli.ExitOK)
	r.wantOut(t, "ID", "TOOL", fmt.Sprint(w.snaps[0]), "write_file", "notes.md", "edit_file", "main.go", "delete_file", "old.txt", "ses_1")

	r = w.run(t, "snapshots", "--json", "--path", "main.go")
	r.wantCode(t, cli.ExitOK)
	var out struct {
		Snapshots []map[string]any `json:"snapshots"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Snapshots) != 1 || out.Snapshots[0]["tool"] != "edit_file" || out.Snapshots[0]["status"] != "completed" {
		t.Errorf("--path main.go: %v", out.Snapshots)
	}
	w.run(t, "snapshots", "--session", "nope").wantOut(t, "no snapshots (session nope)")
	w.run(t, "snapshots", "extra").wantCode(t, cli.ExitUsage)
}

func TestSnapshotShow(t *testing.T) {
	w := newSnapWorld(t, editFiles, editCalls...)
	r := w.run(t, "snapshot", "show", fmt.Sprint(w.snaps[2]))
	r.wantCode(t, cli.ExitOK)
	r.wantOut(t, "delete_file", "old.txt", "before  file 4 bytes mode 0644 blob", "after   absent")
	// The post-state of an edit, in the pre-state's words.
	r = w.run(t, "snapshot", "show", fmt.Sprint(w.snaps[1]))
	r.wantCode(t, cli.ExitOK)
	r.wantOut(t, "before  file 41 bytes mode 0644 blob", "after   file 41 bytes mode 0644 blob ")

	r = w.run(t, "snapshot", "show", "--json", fmt.Sprint(w.snaps[0]))
	r.wantCode(t, cli.ExitOK)
	m := r.jsonObject(t)
	files := m["files"].([]any)
	if len(files) != 1 || files[0].(map[string]any)["pre"].(map[string]any)["state"] != "absent" {
		t.Errorf("files %v", files)
	}

	r = w.run(t, "snapshot", "show", "1")
	r.wantCode(t, cli.ExitError)
	r.wantErr(t, "no such snapshot 1")
	w.run(t, "snapshot", "show", "x").wantCode(t, cli.ExitUsage)
}

func TestDiff(t *testing.T) {
	w := newSnapWorld(t, editFiles, editCalls...)
	r := w.run(t, "diff", fmt.Sprint(w.snaps[1]))
	r.wantCode(t, cli.ExitOK)
	r.wantOut(t, "--- a/main.go\n+++ b/main.go\n", "-\treturn 1\n+\treturn 2\n")
	r = w.run(t, "diff", fmt.Sprint(w.snaps[0]))
	r.wantOut(t, "--- /dev/null\n+++ b/notes.md\n@@ -0,0 +1,3 @@\n+one\n")
	r = w.run(t, "diff", "--json", fmt.Sprint(w.snaps[2]))
	r.wantCode(t, cli.ExitOK)
	if files := r.jsonObject(t)["files"].([]any); len(files) != 1 || !strings.Contains(files[0].(map[string]any)["unified"].(string), "+++ /dev/null") {
		t.Errorf("files %v", files)
	}
	// After restoring the file by hand, diff says it is unchanged.
	os.WriteFile(filepath.Join(w.ws, "old.txt"), []byte("old\n"), 0o644)
	w.run(t, "diff", fmt.Sprint(w.snaps[2])).wantOut(t, "old.txt: unchanged since snapshot")
}

// TestRollback_Offline: with no engine running, opx rollback opens the
// ledger itself and restores into the workspace the ledger names; a dry
// run changes nothing; the rollback is recorded and can be undone.
func TestRollback_Offline(t *testing.T) {
	w := newSnapWorld(t, editFiles, editCalls...)
	r := w.run(t, "rollback", "--dry-run", fmt.Sprint(w.snaps[1]))
	r.wantCode(t, cli.ExitOK)
	r.wantOut(t, "dry run: rollback of snapshot", "restore  main.go", "nothing changed")
	if !strings.Contains(w.read("main.go"), "return 2") {
		t.Fatal("a dry run changed the file")
	}
	r = w.run(t, "rollback", "--json", fmt.Sprint(w.snaps[1]))
	r.wantCode(t, cli.ExitOK)
	m := r.jsonObject(t)
	if !strings.Contains(w.read("main.go"), "return 1") || m["restored"].([]any)[0] != "main.go" {
		t.Fatalf("after rollback main.go = %q, report %v", w.read("main.go"), m)
	}
	pre := m["pre_snapshot"].(json.Number).String()
	r = w.run(t, "rollback", pre)
	r.wantCode(t, cli.ExitOK)
	r.wantOut(t, "rolled back", "1 path restored")
	if !strings.Contains(w.read("main.go"), "return 2") {
		t.Errorf("undoing the rollback left %q", w.read("main.go"))
	}
	r = w.run(t, "rollback", "--session", "ses_1")
	r.wantCode(t, cli.ExitOK)
	// Each path in the word of what was done to it: notes.md did not
	// exist before (removed), old.txt was deleted (recreated).
	r.wantOut(t, "rolled back: 1 path restored, 1 recreated, 1 removed;")
	if w.read("notes.md") != "<absent>" || w.read("old.txt") != "old\n" || !strings.Contains(w.read("main.go"), "return 1") {
		t.Errorf("session rollback: notes %q old %q main %q", w.read("notes.md"), w.read("old.txt"), w.read("main.go"))
	}
}

// TestRollback_Conflict: a path changed since the tool is refused with
// exit 4 and named; --force overwrites.
func TestRollback_Conflict(t *testing.T) {
	w := newSnapWorld(t, editFiles, editCalls...)
	os.WriteFile(filepath.Join(w.ws, "notes.md"), []byte("someone else\n"), 0o644)
	r := w.run(t, "rollback", fmt.Sprint(w.snaps[0]))
	r.wantCode(t, cli.ExitIntegrity)
	r.wantOut(t, "CONFLICT notes.md: changed since opx changed it", "not rolled back")
	r.wantErr(t, "use --force")
	if w.read("notes.md") != "someone else\n" {
		t.Fatal("a refused rollback changed the file")
	}
	w.run(t, "rollback", "--force", fmt.Sprint(w.snaps[0])).wantCode(t, cli.ExitOK)
	if w.read("notes.md") != "<absent>" {
		t.Errorf("forced rollback left notes.md %q", w.read("notes.md"))
	}
}

// TestRollback_CorruptBlob: a snapshot blob that fails its hash refuses
// the rollback with exit 4; nothing changes.
func TestRollback_CorruptBlob(t *testing.T) {
	w := newSnapWorld(t, editFiles, editCalls...)
	h := ledger.Sum([]byte(editFiles["main.go"]))
	var good []byte
	ledgertest.Edit(t, w.ledger, func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("blobs"))
		good = append([]byte(nil), b.Get(h[:])...)
		enc, _ := zstd.NewWriter(nil)
		defer enc.Close()
		return b.Put(h[:], enc.EncodeAll([]byte("package evil\n"), nil))
	})
	r := w.run(t, "rollback", fmt.Sprint(w.snaps[1]))
	r.wantCode(t, cli.ExitIntegrity)
	r.wantErr(t, "hashes to")
	if !strings.Contains(w.read("main.go"), "return 2") {
		t.Error("a refused rollback changed the file")
	}
	w.run(t, "diff", fmt.Sprint(w.snaps[1])).wantCode(t, cli.ExitIntegrity)
	ledgertest.Edit(t, w.ledger, func(tx *bolt.Tx) error { return tx.Bucket([]byte("blobs")).Put(h[:], good) })
}

func TestRollback_Usage(t *testing.T) {
	w := newSnapWorld(t, editFiles, editCalls[0])
	w.run(t, "rollback").wantCode(t, cli.ExitUsage)
	w.run(t, "rollback", "1", "--session", "ses_1").wantCode(t, cli.ExitUsage)
	w.run(t, "rollback", "0").wantCode(t, cli.ExitUsage)
	r := w.run(t, "rollback", "2")
	r.wantCode(t, cli.ExitError)
	r.wantErr(t, "no such snapshot 2")
}

// TestRollback_UnknownSession: --session of a session the ledger does not
// hold says so, not that it "has no snapshots"; one it holds without
// snapshots says that.
func TestRollback_UnknownSession(t *testing.T) {
	w := newSnapWorld(t, editFiles, editCalls[0])
	r := w.run(t, "rollback", "--session", "ses_nope")
	r.wantCode(t, cli.ExitError)
	r.wantErr(t, `unknown session "ses_nope": no entry of the ledger belongs to it`)
	if strings.Contains(r.stderr, "has no snapshots") {
		t.Errorf("an unknown session said to have no snapshots: %s", r.stderr)
	}
}

// TestWorkspace_Missing: a workspace that does not exist is named in
// words, not as the syscall that found it, by every command that takes
// --workspace.
func TestWorkspace_Missing(t *testing.T) {
	ws := filepath.Join(t.TempDir(), "gone", "ws")
	for _, args := range [][]string{{"status"}, {"snapshots"}, {"sessions"}, {"ledger", "verify"}, {"rollback", "--session", "s"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			r := run(t, append(args, "--workspace", ws)...)
			r.wantCode(t, cli.ExitError)
			r.wantErr(t, "workspace "+ws+" does not exist: name an existing directory with --workspace")
			if strings.Contains(r.stderr, "lstat") || strings.Contains(r.stderr, "stat ") {
				t.Errorf("raw syscall text: %s", r.stderr)
			}
		})
	}
}
