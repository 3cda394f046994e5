package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opx-dev/opx/chronicle"
	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/engine/executor"
	"github.com/opx-dev/opx/engine/judge"
	"github.com/opx-dev/opx/engine/undo"
	"github.com/opx-dev/opx/fixtures"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/ledgertest"
	"github.com/opx-dev/opx/shield"
)

// writeTool is a mutating tool the read-only policy must never let run.
type writeTool struct{ ran bool }

func (w *writeTool) Tools() []executor.ToolDef {
	return []executor.ToolDef{{Name: "write_file", Description: "writes", InputSchema: json.RawMessage(`{}`), Group: "files", Mutating: true}}
}
func (w *writeTool) Execute(context.Context, executor.Call) executor.Result {
	w.ran = true
	return executor.Result{Content: "wrote"}
}

type fixture struct {
	ws    string
	l     *ledger.Ledger
	p     *engine.Pipeline
	write *writeTool
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "README.md"), []byte("# hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := executor.OpenWorkspace(ws)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	wt := &writeTool{}
	reg, err := executor.NewRegistry(executor.NewFiles(w), wt)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "ledger.db")
	l, err := ledger.Create(path, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := l.Close(); err != nil {
			t.Error(err)
		}
		ledgertest.MustVerify(t, path, event.StrictOptions())
	})
	return &fixture{ws: ws, l: l, p: &engine.Pipeline{Recorder: engine.NewRecorder(l), Tools: reg, Evaluator: engine.ReadOnlyPolicy{}}, write: wt}
}

// types returns the types of the committed entries after seq from.
func (f *fixture) types(t *testing.T, from uint64) []string {
	t.Helper()
	h, err := f.l.Head()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	if h.Seq < from {
		return nil
	}
	if err := f.l.Range(from, h.Seq, func(e ledger.Entry) error { out = append(out, e.Type); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestPipeline_AllowedReadIsDurableBeforeReturn(t *testing.T) {
	f := newFixture(t)
	out, err := f.p.Handle(context.Background(), "s1", "", "m1", "c1", "read_file", `{"path": "README.md"}`)
	if err != nil {
		t.Fatal(err)
	}
	if out.IsError || out.Content != "# hello\n" {
		t.Fatalf("outcome %+v", out)
	}
	// Head() shows only committed entries: the result is durable now.
	want := []string{"tool.proposed", "shield.verdict", "exec.started", "exec.completed"}
	if got := f.types(t, 1); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("entries %v, want %v", got, want)
	}
	e, err := f.l.Get(1)
	if err != nil {
		t.Fatal(err)
	}
	var tp event.ToolProposed
	if err := json.Unmarshal(e.Data, &tp); err != nil {
		t.Fatal(err)
	}
	if tp.Arguments != `{"path":"README.md"}` || tp.ActionHash != engine.ActionHash("read_file", []byte(tp.Arguments)).String() {
		t.Errorf("proposal %+v: arguments not canonical or action hash wrong", tp)
	}
}

func TestPipeline_Blocked(t *testing.T) {
	tests := []struct{ name, tool, args, rule string }{
		{"mutating", "write_file", `{"path":"x","content":"y"}`, "read-only-policy:mutating"},
		{"unknown", "rm_rf", `{}`, "read-only-policy:unknown-tool"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			out, err := f.p.Handle(context.Background(), "s1", "", "m1", "c1", tt.tool, tt.args)
			if err != nil {
				t.Fatal(err)
			}
			if !out.IsError || !strings.Contains(out.Content, tt.rule) || f.write.ran {
				t.Errorf("outcome %+v, ran %v; want blocked by %s", out, f.write.ran, tt.rule)
			}
			if err := f.l.Sync(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got := f.types(t, 1); strings.Join(got, " ") != "tool.proposed shield.verdict" {
				t.Errorf("entries %v, want proposal and verdict only", got)
			}
		})
	}
}

func TestPipeline_BadArguments(t *testing.T) {
	for _, args := range []string{`[1]`, `{"path":`, `{"n":1.5}`, `{"a":1,"a":2}`, "\"x\""} {
		f := newFixture(t)
		out, err := f.p.Handle(context.Background(), "s1", "", "m1", "c1", "read_file", args)
		if err != nil || !out.IsError {
			t.Errorf("args %s: outcome %+v, err %v; want an error result", args, out, err)
		}
		if got := f.types(t, 1); len(got) != 0 {
			t.Errorf("args %s: recorded %v, want nothing", args, got)
		}
	}
}

func TestPipeline_LargeResultIsABlob(t *testing.T) {
	f := newFixture(t)
	big := strings.Repeat("line of text\n", 1000)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "big.txt"), []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, _ := executor.OpenWorkspace(dir)
	defer ws.Close()
	reg, _ := executor.NewRegistry(executor.NewFiles(ws))
	f.p.Tools = reg
	out, err := f.p.Handle(context.Background(), "s1", "", "m1", "c1", "read_file", `{"path":"big.txt"}`)
	if err != nil || out.Content != big {
		t.Fatalf("outcome %d bytes, err %v", len(out.Content), err)
	}
	h, _ := f.l.Head()
	e, _ := f.l.Get(h.Seq)
	var ec event.ExecCompleted
	if err := json.Unmarshal(e.Data, &ec); err != nil {
		t.Fatal(err)
	}
	if ec.Result != "" || ec.Size != int64(len(big)) {
		t.Fatalf("exec.completed %+v: want the result as a blob", ec)
	}
	b, err := f.l.GetBlob(ledger.Sum([]byte(big)))
	if err != nil || string(b) != big {
		t.Errorf("result blob: %v", err)
	}
}

func TestRecorder_CoalescesTokensInOrder(t *testing.T) {
	f := newFixture(t)
	r := f.p.Recorder
	ctx := context.Background()
	for _, tok := range []string{"Hel", "lo", " world"} {
		if err := r.Token(ctx, "s1", "", "m1", tok); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Token(ctx, "s1", "", "m2", "next"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Record(ctx, ledger.Sync, "s1", &event.AgentError{MessageID: "m2", Code: "x", Message: "y"}); err != nil {
		t.Fatal(err)
	}
	var got []string
	h, _ := f.l.Head()
	f.l.Range(1, h.Seq, func(e ledger.Entry) error {
		got = append(got, e.Type+" "+string(e.Data))
		return nil
	})
	want := []string{
		`agent.tokens {"count":3,"message_id":"m1","text":"Hello world"}`,
		`agent.tokens {"count":1,"message_id":"m2","text":"next"}`,
		`agent.error {"code":"x","message":"y","message_id":"m2"}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("entries:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestPipeline_Shield: with Shield as the evaluator, every tier's verdict
// is recorded, a tier 1 block wins over a tier 0 allow, and nothing
// blocked runs.
func TestPipeline_Shield(t *testing.T) {
	f := newFixture(t)
	policy, err := shield.ParsePolicy(fixtures.DefaultPolicy)
	if err != nil {
		t.Fatal(err)
	}
	f.p.Evaluator = judge.ShieldEvaluator{S: shield.New(shield.Config{Workspace: f.ws, Home: "/home/nobody", Policy: policy})}
	ctx := context.Background()
	out, err := f.p.Handle(ctx, "s1", "", "m1", "c1", "read_file", `{"path":"README.md"}`)
	if err != nil || out.IsError {
		t.Fatalf("allowed read: %+v %v", out, err)
	}
	out, err = f.p.Handle(ctx, "s1", "", "m1", "c2", "read_file", `{"path":"certs/server.pem"}`)
	if err != nil || !out.IsError || !strings.Contains(out.Content, "credential-path") {
		t.Fatalf("credential read: %+v %v", out, err)
	}
	f.l.Sync(ctx)
	h, _ := f.l.Head()
	var verdicts []string
	f.l.Range(1, h.Seq, func(e ledger.Entry) error {
		if e.Type == event.TypeShieldVerdict {
			var v event.ShieldVerdict
			json.Unmarshal(e.Data, &v)
			verdicts = append(verdicts, fmt.Sprintf("%s:%s/%d/%s", v.CallID, v.Decision, v.Tier, v.Rule))
			if v.PolicyHash != policy.Hash().String() {
				t.Errorf("verdict policy hash %s, want %s", v.PolicyHash, policy.Hash())
			}
		}
		return nil
	})
	want := "c1:allow/0/policy:workspace-reads c1:allow/1/heuristics:none c2:allow/0/policy:workspace-reads c2:block/1/credential-path"
	if strings.Join(verdicts, " ") != want {
		t.Errorf("verdicts %v\nwant %s", verdicts, want)
	}
}

// TestPipeline_SnapshotBeforeWrite: a mutating call is snapshotted before
// it runs (pre-state content as a blob, or absent) and its post-state is
// recorded after; the ledger passes the causality check.
func TestPipeline_SnapshotBeforeWrite(t *testing.T) {
	f := newFixture(t)
	policy, _ := shield.ParsePolicy(fixtures.DefaultPolicy)
	w, err := executor.OpenWorkspace(f.ws)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	reg, _ := executor.NewRegistry(executor.NewFiles(w), executor.NewEdits(w))
	f.p.Tools = reg
	f.p.Evaluator = judge.ShieldEvaluator{S: shield.New(shield.Config{Workspace: f.ws, Home: "/home/nobody", Policy: policy})}
	f.p.Chronicle = undo.NewChronicle(undo.WorkspaceFS(w), f.p.Recorder, chronicle.Retention{})
	ctx := context.Background()
	for i, c := range []struct{ tool, args string }{
		{"write_file", `{"path":"new.txt","content":"v1"}`},
		{"edit_file", `{"path":"README.md","old":"hello","new":"bye"}`},
	} {
		out, err := f.p.Handle(ctx, "s1", "", "m1", fmt.Sprint("c", i), c.tool, c.args)
		if err != nil || out.IsError {
			t.Fatalf("%s: %+v %v", c.tool, out, err)
		}
	}
	h, _ := f.l.Head()
	var snaps []event.Snapshot
	var posts [][]event.PostState
	var types []string
	f.l.Range(1, h.Seq, func(e ledger.Entry) error {
		types = append(types, e.Type)
		p, _ := event.Decode(e)
		switch x := p.(type) {
		case *event.Snapshot:
			snaps = append(snaps, *x)
		case *event.ExecCompleted:
			posts = append(posts, x.Post)
		}
		return nil
	})
	if got := strings.Join(types, " "); !strings.Contains(got, "shield.verdict chronicle.snapshot exec.started exec.completed") {
		t.Errorf("entries %s", got)
	}
	if len(snaps) != 2 || snaps[0].Files[0].State != event.StateAbsent || snaps[1].Files[0].State != event.StateFile {
		t.Fatalf("snapshots %+v", snaps)
	}
	b, err := f.l.GetBlob(mustHash(t, snaps[1].Files[0].Blob))
	if err != nil || string(b) != "# hello\n" {
		t.Errorf("pre-state blob %q %v", b, err)
	}
	if len(posts) != 2 || posts[0][0].Hash != ledger.Sum([]byte("v1")).String() || posts[1][0].Hash != ledger.Sum([]byte("# bye\n")).String() {
		t.Errorf("post states %+v", posts)
	}
}

func mustHash(t *testing.T, s string) ledger.Hash {
	t.Helper()
	h, err := ledger.ParseHash(s)
	if err != nil {
		t.Fatal(err)
	}
	return h
}
