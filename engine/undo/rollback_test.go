package undo_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/opx-dev/opx/chronicle"
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

// allowAll is a policy that allows what the heuristics do not block, so
// these tests exercise Chronicle, not Shield.
const allowAll = "version: 1\ndefault: allow\n"

// clientToken is the client token the engines these tests start accept.
const clientToken = "0123456789abcdef0123456789abcdef"

// rewriteTool is a workspace-wide tool, like a shell command: it rewrites
// every .txt file under data/, deletes data/old.txt and creates data/new/.
type rewriteTool struct{ ws string }

func (r *rewriteTool) Tools() []executor.ToolDef {
	return []executor.ToolDef{{Name: "rewrite_all", Description: "rewrites", InputSchema: json.RawMessage(`{}`), Group: "shell",
		Mutating: true, WorkspaceWide: true}}
}

func (r *rewriteTool) Execute(context.Context, executor.Call) executor.Result {
	ents, _ := os.ReadDir(filepath.Join(r.ws, "data"))
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".txt") {
			os.WriteFile(filepath.Join(r.ws, "data", e.Name()), []byte("rewritten "+e.Name()+"\n"), 0o600)
		}
	}
	os.Remove(filepath.Join(r.ws, "data", "old.txt"))
	os.MkdirAll(filepath.Join(r.ws, "data", "new"), 0o700)
	os.WriteFile(filepath.Join(r.ws, "data", "new", "made.txt"), []byte("made\n"), 0o644)
	return executor.Result{Content: "rewrote"}
}

type chronFixture struct {
	ws    string
	path  string
	l     *ledger.Ledger
	p     *engine.Pipeline
	chron *undo.Chronicle
	n     int
}

func newChronFixture(t *testing.T, files map[string]string, r chronicle.Retention) *chronFixture {
	t.Helper()
	ws := t.TempDir()
	for p, c := range files {
		full := filepath.Join(ws, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w, err := executor.OpenWorkspace(ws)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	reg, err := executor.NewRegistry(executor.NewFiles(w), executor.NewEdits(w), &rewriteTool{ws: ws})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "ledger.db")
	l, err := ledger.Create(path, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := &chronFixture{ws: ws, path: path, l: l}
	t.Cleanup(func() {
		if f.l != nil {
			f.l.Close()
		}
		ledgertest.MustVerify(t, path, event.StrictOptions())
	})
	policy, err := shield.ParsePolicy([]byte(allowAll))
	if err != nil {
		t.Fatal(err)
	}
	rec := engine.NewRecorder(l)
	f.chron = undo.NewChronicle(undo.WorkspaceFS(w), rec, r)
	f.p = &engine.Pipeline{Recorder: rec, Tools: reg, Chronicle: f.chron,
		Evaluator: judge.ShieldEvaluator{S: shield.New(shield.Config{Workspace: ws, Home: "/home/nobody", Policy: policy, RateLimit: 10000})}}
	return f
}

// call runs one tool call in session s1 and returns the seq of the
// snapshot it took.
func (f *chronFixture) call(t *testing.T, tool, args string) uint64 {
	t.Helper()
	f.n++
	out, err := f.p.Handle(context.Background(), "s1", "", "m1", fmt.Sprint("c", f.n), tool, args)
	if err != nil || out.IsError {
		t.Fatalf("%s %s: %+v %v", tool, args, out, err)
	}
	var snap uint64
	h, _ := f.l.Head()
	f.l.Range(0, h.Seq, func(e ledger.Entry) error {
		if e.Type == event.TypeSnapshot {
			snap = e.Seq
		}
		return nil
	})
	return snap
}

func (f *chronFixture) read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(f.ws, p))
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}

// tree is the workspace's state now, as a comparable manifest hash.
func (f *chronFixture) tree(t *testing.T) ledger.Hash {
	t.Helper()
	w, err := executor.OpenWorkspace(f.ws)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	res, err := chronicle.NewScanner(undo.WorkspaceFS(w)).Scan(nil)
	if err != nil {
		t.Fatal(err)
	}
	return res.Tree.Hash()
}

func (f *chronFixture) rollback(t *testing.T, req undo.RollbackRequest) (*undo.RollbackReport, error) {
	t.Helper()
	return f.chron.Rollback(context.Background(), req)
}

// TestChronicle_Rollback_EachEdit: write (new and existing), edit, delete,
// move and make_dir are each undone by rolling back their snapshot, and
// each rollback is itself undone by rolling back its pre-snapshot.
func TestChronicle_Rollback_EachEdit(t *testing.T) {
	for _, c := range []struct {
		name, tool, args string
		check            []string // path=content after the rollback
	}{
		{"write new", "write_file", `{"path":"new.txt","content":"hi"}`, []string{"new.txt=<absent>"}},
		{"write existing", "write_file", `{"path":"a.txt","content":"changed"}`, []string{"a.txt=alpha\n"}},
		{"edit", "edit_file", `{"path":"a.txt","old":"alpha","new":"beta"}`, []string{"a.txt=alpha\n"}},
		{"delete", "delete_file", `{"path":"dir/b.txt"}`, []string{"dir/b.txt=bravo\n"}},
		{"move", "move_file", `{"from":"a.txt","to":"dir/moved.txt"}`, []string{"a.txt=alpha\n", "dir/moved.txt=<absent>"}},
		{"make_dir", "make_dir", `{"path":"x/y/z"}`, []string{"x=<absent>"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newChronFixture(t, map[string]string{"a.txt": "alpha\n", "dir/b.txt": "bravo\n"}, chronicle.Retention{})
			os.Chmod(filepath.Join(f.ws, "dir/b.txt"), 0o640)
			before := f.tree(t)
			snap := f.call(t, c.tool, c.args)
			after := f.tree(t)
			if after == before {
				t.Fatalf("%s changed nothing", c.tool)
			}
			rep, err := f.rollback(t, undo.RollbackRequest{Snapshot: snap})
			if err != nil {
				t.Fatalf("rollback: %v\n%+v", err, rep)
			}
			for _, pc := range c.check {
				p, want, _ := strings.Cut(pc, "=")
				if got := f.read(t, p); want == "<absent>" && !strings.Contains(got, "no such file") || want != "<absent>" && got != want {
					t.Errorf("%s = %q, want %s", p, got, want)
				}
			}
			if got := f.tree(t); got != before {
				t.Errorf("the workspace is not as before %s (content, modes, kinds)", c.tool)
			}
			// Undo the rollback.
			if _, err := f.rollback(t, undo.RollbackRequest{Snapshot: rep.PreSnapshot}); err != nil {
				t.Fatalf("rollback of the rollback: %v", err)
			}
			if got := f.tree(t); got != after {
				t.Errorf("rolling back the rollback did not return to the state after %s", c.tool)
			}
		})
	}
}

// TestChronicle_Rollback_WorkspaceWide: a workspace-wide tool that
// rewrites 1,000 files (new modes), deletes one and creates a directory
// is snapshotted before and diffed after; rolling it back restores every
// file, checked by hash of the whole tree.
func TestChronicle_Rollback_WorkspaceWide(t *testing.T) {
	files := map[string]string{"keep.md": "untouched\n"}
	for i := range 1000 {
		files[fmt.Sprintf("data/f%04d.txt", i)] = fmt.Sprintf("original %d\n", i)
	}
	files["data/old.txt"] = "old\n"
	f := newChronFixture(t, files, chronicle.Retention{})
	before := f.tree(t)
	snap := f.call(t, "rewrite_all", `{}`)
	if f.read(t, "data/f0500.txt") != "rewritten f0500.txt\n" {
		t.Fatal("the tool did not run")
	}
	s := f.snapshot(t, snap)
	if s.Kind != event.KindWorkspace || s.Exec == nil || len(s.Exec.Pre) != 1000+3 {
		t.Fatalf("snapshot %+v, exec %+v (want 1,003 changed paths: 1,001 files and the new dir and file)", s.Snapshot.Kind, s.Exec)
	}
	rep, err := f.rollback(t, undo.RollbackRequest{Snapshot: snap})
	if err != nil {
		t.Fatalf("rollback: %v", err)
	}
	if len(rep.Restored) != 1003 {
		t.Errorf("restored %d paths", len(rep.Restored))
	}
	if f.tree(t) != before {
		t.Errorf("the workspace does not hash as before the command")
	}
	if f.read(t, "data/old.txt") != "old\n" || f.read(t, "keep.md") != "untouched\n" {
		t.Errorf("old.txt %q keep.md %q", f.read(t, "data/old.txt"), f.read(t, "keep.md"))
	}
}

// snapshot returns the index's view of a snapshot.
func (f *chronFixture) snapshot(t *testing.T, seq uint64) *chronicle.Snapshot {
	t.Helper()
	x, err := chronicle.BuildIndex(f.l)
	if err != nil {
		t.Fatal(err)
	}
	s, err := x.Get(seq)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestChronicle_Rollback_Conflict: a file changed after the tool is a
// conflict: the rollback is refused (nothing changes, nothing recorded)
// and names it; --force overwrites and records that it was forced.
func TestChronicle_Rollback_Conflict(t *testing.T) {
	f := newChronFixture(t, map[string]string{"a.txt": "alpha\n"}, chronicle.Retention{})
	snap := f.call(t, "write_file", `{"path":"a.txt","content":"agent\n"}`)
	os.WriteFile(filepath.Join(f.ws, "a.txt"), []byte("human edit\n"), 0o644)
	h0, _ := f.l.Head()
	rep, err := f.rollback(t, undo.RollbackRequest{Snapshot: snap})
	var ce *chronicle.ConflictError
	if !errors.As(err, &ce) || !errors.Is(err, chronicle.ErrConflict) || rep.ErrorKind != undo.RollbackConflict {
		t.Fatalf("err %v, report %+v", err, rep)
	}
	if len(ce.Conflicts) != 1 || ce.Conflicts[0].Path != "a.txt" || !strings.Contains(err.Error(), "changed since") {
		t.Errorf("conflicts %+v", ce.Conflicts)
	}
	if h, _ := f.l.Head(); h.Seq != h0.Seq || f.read(t, "a.txt") != "human edit\n" {
		t.Errorf("a refused rollback changed something")
	}
	dry, err := f.rollback(t, undo.RollbackRequest{Snapshot: snap, DryRun: true, Force: true})
	if err != nil || len(dry.Steps) != 1 || dry.Steps[0].Conflict == "" || f.read(t, "a.txt") != "human edit\n" {
		t.Errorf("dry run %+v %v", dry, err)
	}
	if _, err := f.rollback(t, undo.RollbackRequest{Snapshot: snap, Force: true}); err != nil {
		t.Fatal(err)
	}
	if f.read(t, "a.txt") != "alpha\n" {
		t.Errorf("forced rollback left %q", f.read(t, "a.txt"))
	}
	x, _ := chronicle.BuildIndex(f.l)
	if rbs := x.Rollbacks(); len(rbs) != 1 || !rbs[0].Forced {
		t.Errorf("rollbacks %+v", rbs)
	}
}

// TestChronicle_Rollback_CorruptBlob: a snapshot blob that no longer
// hashes to its name refuses the whole rollback with an integrity error
// (exit 4); the workspace and the ledger are untouched.
func TestChronicle_Rollback_CorruptBlob(t *testing.T) {
	f := newChronFixture(t, map[string]string{"a.txt": "alpha\n", "b.txt": "bravo\n"}, chronicle.Retention{})
	snapA := f.call(t, "write_file", `{"path":"a.txt","content":"1\n"}`)
	snapB := f.call(t, "write_file", `{"path":"b.txt","content":"2\n"}`)
	blob := f.snapshot(t, snapA).Files[0].Blob
	h, _ := ledger.ParseHash(blob)
	f.l.Close()
	var good []byte
	ledgertest.Edit(t, f.path, func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("blobs"))
		good = append([]byte(nil), b.Get(h[:])...)
		return b.Put(h[:], zstdFrame(t, []byte("not alpha\n")))
	})
	l, err := ledger.Open(f.path, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f.l = l
	w, _ := executor.OpenWorkspace(f.ws)
	defer w.Close()
	chron := undo.NewChronicle(undo.WorkspaceFS(w), engine.NewRecorder(l), chronicle.Retention{})
	h0, _ := l.Head()
	rep, err := chron.Rollback(context.Background(), undo.RollbackRequest{Session: "s1"})
	if !errors.Is(err, ledger.ErrIntegrity) || rep.ErrorKind != undo.RollbackIntegrity {
		t.Fatalf("err %v kind %q", err, rep.ErrorKind)
	}
	if h, _ := l.Head(); h.Seq != h0.Seq || f.read(t, "a.txt") != "1\n" || f.read(t, "b.txt") != "2\n" {
		t.Errorf("a refused rollback changed something")
	}
	// The other snapshot is intact and still restorable.
	if _, err := chron.Rollback(context.Background(), undo.RollbackRequest{Snapshot: snapB}); err != nil {
		t.Errorf("rollback of the intact snapshot: %v", err)
	}
	// The tampered ledger fails verify; put the blob back for the
	// cleanup's check.
	if rpt, _ := l.Verify(ledger.VerifyOptions{}); rpt.OK {
		t.Errorf("verify passed a corrupt blob")
	}
	l.Close()
	f.l = nil
	ledgertest.Edit(t, f.path, func(tx *bolt.Tx) error { return tx.Bucket([]byte("blobs")).Put(h[:], good) })
}

func zstdFrame(t *testing.T, b []byte) []byte {
	t.Helper()
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	return enc.EncodeAll(b, nil)
}

// TestChronicle_Retention: beyond max_snapshots the oldest snapshots lose
// the content no kept snapshot shares, recorded as chronicle.pruned; the
// ledger still verifies strictly (cleanup), a pruned snapshot's rollback
// says exactly why it cannot, and a kept one still rolls back.
func TestChronicle_Retention(t *testing.T) {
	f := newChronFixture(t, map[string]string{"a.txt": "a0\n", "b.txt": "b0\n", "c.txt": "c0\n", "shared.txt": "same\n"},
		chronicle.Retention{MaxSnapshots: 2})
	s1 := f.call(t, "write_file", `{"path":"a.txt","content":"a1\n"}`)
	f.call(t, "write_file", `{"path":"shared.txt","content":"b0\n"}`) // its pre-state "same\n" is unique; b0 is b.txt's content
	f.call(t, "write_file", `{"path":"b.txt","content":"b1\n"}`)
	s4 := f.call(t, "write_file", `{"path":"c.txt","content":"c1\n"}`)
	x, err := chronicle.BuildIndex(f.l)
	if err != nil {
		t.Fatal(err)
	}
	var pruned []uint64
	for _, s := range x.Snapshots() {
		if s.Pruned != 0 {
			pruned = append(pruned, s.Seq)
		}
	}
	if len(pruned) != 2 || pruned[0] != s1 {
		t.Fatalf("pruned snapshots %v, want the two oldest", pruned)
	}
	if _, err := f.l.GetBlob(ledger.Sum([]byte("a0\n"))); !errors.Is(err, ledger.ErrNotFound) {
		t.Errorf("a0's blob: %v, want pruned", err)
	}
	if _, err := f.l.GetBlob(ledger.Sum([]byte("b0\n"))); err != nil {
		t.Errorf("b0's blob is still named by a kept snapshot, but: %v", err)
	}
	rep, err := f.rollback(t, undo.RollbackRequest{Snapshot: s1})
	if !errors.Is(err, chronicle.ErrPruned) || rep.ErrorKind != undo.RollbackPruned || !strings.Contains(err.Error(), "retention") {
		t.Errorf("rollback of a pruned snapshot: %v (%s)", err, rep.ErrorKind)
	}
	if _, err := f.rollback(t, undo.RollbackRequest{Snapshot: s4}); err != nil || f.read(t, "c.txt") != "c0\n" {
		t.Errorf("rollback of a kept snapshot: %v, c.txt %q", err, f.read(t, "c.txt"))
	}
}

// TestChronicle_Rollback_Session: rolling back a session restores every
// path to its state before the session first changed it, whatever the
// session did in between.
func TestChronicle_Rollback_Session(t *testing.T) {
	f := newChronFixture(t, map[string]string{"a.txt": "a0\n", "gone.txt": "g\n"}, chronicle.Retention{})
	before := f.tree(t)
	f.call(t, "write_file", `{"path":"a.txt","content":"a1\n"}`)
	f.call(t, "edit_file", `{"path":"a.txt","old":"a1","new":"a2"}`)
	f.call(t, "make_dir", `{"path":"n"}`)
	f.call(t, "write_file", `{"path":"n/new.txt","content":"new\n"}`)
	f.call(t, "delete_file", `{"path":"gone.txt"}`)
	f.call(t, "move_file", `{"from":"n/new.txt","to":"moved.txt"}`)
	if _, err := f.rollback(t, undo.RollbackRequest{Session: "s1"}); err != nil {
		t.Fatal(err)
	}
	if f.tree(t) != before {
		t.Errorf("after the session rollback: a.txt %q gone.txt %q moved.txt %q", f.read(t, "a.txt"), f.read(t, "gone.txt"), f.read(t, "moved.txt"))
	}
	if _, err := f.rollback(t, undo.RollbackRequest{Session: "nope"}); !errors.Is(err, chronicle.ErrNothingToRestore) {
		t.Errorf("unknown session: %v", err)
	}
}

// TestChronicle_SymlinkRace swaps a workspace directory for a symlink to
// the outside, over and over, while the agent writes into it and while
// the writes are rolled back: no snapshot ever holds the outside file's
// content, and nothing is written outside.
func TestChronicle_SymlinkRace(t *testing.T) {
	f := newChronFixture(t, map[string]string{"d/f": "inside\n"}, chronicle.Retention{})
	outside := t.TempDir()
	secret := "outside secret\n"
	os.WriteFile(filepath.Join(outside, "f"), []byte(secret), 0o644)
	dir := filepath.Join(f.ws, "d")
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			os.Rename(dir, dir+".real")
			os.Symlink(outside, dir)
			os.Remove(dir)
			os.Rename(dir+".real", dir)
		}
	}()
	for i := 0; i < 200; i++ {
		f.n++
		f.p.Handle(context.Background(), "s1", "", "m1", fmt.Sprint("c", f.n), "write_file", fmt.Sprintf(`{"path":"d/f","content":"v%d\n"}`, i))
		if i%10 == 9 {
			f.chron.Rollback(context.Background(), undo.RollbackRequest{Session: "s1", Force: true})
		}
	}
	stop.Store(true)
	wg.Wait()
	if b, _ := os.ReadFile(filepath.Join(outside, "f")); string(b) != secret {
		t.Errorf("the outside file was written: %q", b)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 1 {
		t.Errorf("files appeared outside: %v", ents)
	}
	if _, err := f.l.GetBlob(ledger.Sum([]byte(secret))); !errors.Is(err, ledger.ErrNotFound) {
		t.Errorf("a snapshot stored the outside file's content: %v", err)
	}
}

// tamperTool is a workspace-wide tool, like a shell command the command
// sandbox lets write anywhere in the workspace: it rewrites opx's config,
// adds a file under .opx and edits an ordinary file.
type tamperTool struct{ ws string }

func (t *tamperTool) Tools() []executor.ToolDef {
	return []executor.ToolDef{{Name: "tamper", Description: "tampers", InputSchema: json.RawMessage(`{}`), Group: "shell",
		Mutating: true, WorkspaceWide: true}}
}

func (t *tamperTool) Execute(context.Context, executor.Call) executor.Result {
	os.WriteFile(filepath.Join(t.ws, ".opx/config.yaml"), []byte("policy: allow-everything.yaml\n"), 0o644)
	os.WriteFile(filepath.Join(t.ws, ".opx/planted.yaml"), []byte("x\n"), 0o644)
	os.WriteFile(filepath.Join(t.ws, "notes.md"), []byte("edited\n"), 0o644)
	return executor.Result{Content: "done"}
}

// TestChronicle_RestoreProtected: what a command changes under .opx is
// undone at once (recorded as a rollback of its snapshot, and said in the
// result), while its other changes stand.
func TestChronicle_RestoreProtected(t *testing.T) {
	f := newChronFixture(t, map[string]string{".opx/config.yaml": "provider:\n  kind: scripted\n", "notes.md": "original\n"}, chronicle.Retention{})
	reg, _ := executor.NewRegistry(&tamperTool{ws: f.ws})
	f.p.Tools = reg
	out, err := f.p.Handle(context.Background(), "s1", "", "m1", "c1", "tamper", "{}")
	if err != nil {
		t.Fatal(err)
	}
	if !out.IsError || !strings.Contains(out.Content, "opx restored what the command changed in its own configuration (.opx/config.yaml, .opx/planted.yaml)") {
		t.Errorf("result %+v", out)
	}
	if f.read(t, ".opx/config.yaml") != "provider:\n  kind: scripted\n" || !strings.Contains(f.read(t, ".opx/planted.yaml"), "no such file") {
		t.Errorf("config %q, planted %q", f.read(t, ".opx/config.yaml"), f.read(t, ".opx/planted.yaml"))
	}
	if f.read(t, "notes.md") != "edited\n" {
		t.Errorf("the command's other change was undone too: %q", f.read(t, "notes.md"))
	}
	x, _ := chronicle.BuildIndex(f.l)
	if rbs := x.Rollbacks(); len(rbs) != 1 || rbs[0].Snapshot != x.Snapshots()[0].Seq {
		t.Errorf("rollbacks %+v", rbs)
	}
}
