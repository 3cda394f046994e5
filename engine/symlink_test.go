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
	"github.com/opx-dev/opx/engine/redrive"
	"github.com/opx-dev/opx/engine/undo"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/replay/rerun"
	"github.com/opx-dev/opx/shield"
)

// symlinkSecret is what the denied file holds: no tool result may carry it.
const symlinkSecret = "SECRET-b1f07a"

// linkWorkspace is a workspace whose policy denies secrets/** and allows
// the rest, with symlinks into the denied tree (a directory link, a file
// link, a chain, a link under which ".." leads into the tree) and one
// legitimate link (docs -> pub).
type linkWorkspace struct {
	ws string
	w  *executor.Workspace
	f  *fixture
}

func newLinkWorkspace(t *testing.T) *linkWorkspace {
	t.Helper()
	f := newFixture(t)
	ws := f.ws
	for _, d := range []string{"secrets/sub", "pub", "plain"} {
		if err := os.MkdirAll(filepath.Join(ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{"secrets/key": symlinkSecret + "\n", "pub/a.txt": "public\n", "plain/key": "nothing here\n"}
	for p, c := range files {
		if err := os.WriteFile(filepath.Join(ws, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"s":      "secrets",     // a directory link
		"k":      "secrets/key", // a file link
		"c1":     "c2",          // a chain: c1 -> c2 -> secrets
		"c2":     "./s",
		"x":      "secrets/sub", // x/../key is secrets/key to the kernel
		"docs":   "pub",         // legitimate
		"pub/up": "../secrets",  // a link in a subdirectory, relative to it
	}
	for l, target := range links {
		if err := os.Symlink(target, filepath.Join(ws, l)); err != nil {
			t.Fatal(err)
		}
	}
	w, err := executor.OpenWorkspace(ws)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	reg, err := executor.NewRegistry(executor.NewFiles(w), executor.NewEdits(w), executor.NewSearch(w))
	if err != nil {
		t.Fatal(err)
	}
	policy, err := shield.ParsePolicy([]byte("version: 1\ndefault: allow\ndeny:\n  - name: no-secrets\n    paths: [\"secrets/**\", \"secrets\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	f.p.Tools = reg
	f.p.Evaluator = judge.ShieldEvaluator{S: shield.New(shield.Config{Workspace: ws, Home: "/home/nobody", Policy: policy, RateLimit: 1 << 20}), FS: w}
	f.p.Chronicle = undo.NewChronicle(undo.WorkspaceFS(w), f.p.Recorder, chronicle.Retention{})
	return &linkWorkspace{ws: ws, w: w, f: f}
}

// verdicts returns the recorded verdicts of callID.
func (lw *linkWorkspace) verdicts(t *testing.T, callID string) []event.ShieldVerdict {
	t.Helper()
	ctx := context.Background()
	if err := lw.f.l.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	h, _ := lw.f.l.Head()
	var out []event.ShieldVerdict
	lw.f.l.Range(1, h.Seq, func(e ledger.Entry) error {
		if e.Type == event.TypeShieldVerdict {
			var v event.ShieldVerdict
			json.Unmarshal(e.Data, &v)
			if v.CallID == callID {
				out = append(out, v)
			}
		}
		return nil
	})
	return out
}

// TestPipeline_Symlink_DeniedTreeThroughLinks: with a policy that denies
// secrets/**, no spelling through a symlink inside the workspace (a
// directory link, a file link, a chain, ".." after a link, a link in a
// subdirectory) lets a built-in tool read, list, search, edit, write or
// delete the denied tree; Shield blocks each and its verdict says the
// path was reached through a symlink. The legitimate link still works.
func TestPipeline_Symlink_DeniedTreeThroughLinks(t *testing.T) {
	lw := newLinkWorkspace(t)
	ctx := context.Background()
	for i, c := range []struct{ tool, args string }{
		{"read_file", `{"path":"s/key"}`},
		{"read_file", `{"path":"k"}`},
		{"read_file", `{"path":"c1/key"}`},
		{"read_file", `{"path":"x/../key"}`},
		{"read_file", `{"path":"pub/up/key"}`},
		{"read_file", `{"path":"docs/up/key"}`},
		{"list_directory", `{"path":"s"}`},
		{"search_files", `{"path":"s","pattern":"SECRET"}`},
		{"search_files", `{"path":"c1/key","pattern":"SECRET"}`},
		{"edit_file", `{"path":"s/key","old":"SECRET","new":"x"}`},
		{"write_file", `{"path":"s/key","content":"overwritten"}`},
		{"delete_file", `{"path":"c1/key"}`},
		{"move_file", `{"from":"s/key","to":"pub/stolen"}`},
	} {
		id := fmt.Sprint("c", i)
		out, err := lw.f.p.Handle(ctx, "s1", "", "m1", id, c.tool, c.args)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(out.Content, symlinkSecret) {
			t.Errorf("%s %s handed over the denied file: %q", c.tool, c.args, out.Content)
		}
		if !out.IsError || !strings.Contains(out.Content, "no-secrets") {
			t.Errorf("%s %s: want blocked by no-secrets, got %+v", c.tool, c.args, out)
		}
		vs := lw.verdicts(t, id)
		if len(vs) == 0 || vs[0].Decision != event.Block || !strings.Contains(vs[0].Reason, "symlink") {
			t.Errorf("%s %s: verdicts %+v, want a block whose reason names the symlink", c.tool, c.args, vs)
		}
	}
	if b, err := os.ReadFile(filepath.Join(lw.ws, "secrets", "key")); err != nil || string(b) != symlinkSecret+"\n" {
		t.Errorf("secrets/key changed: %q %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(lw.ws, "pub", "stolen")); err == nil {
		t.Errorf("secrets/key was moved out")
	}
	// The legitimate link: allowed in both forms, and read.
	out, err := lw.f.p.Handle(ctx, "s1", "", "m1", "ok1", "read_file", `{"path":"docs/a.txt"}`)
	if err != nil || out.IsError || out.Content != "public\n" {
		t.Errorf("read through the legitimate link: %+v %v", out, err)
	}
	out, err = lw.f.p.Handle(ctx, "s1", "", "m1", "ok2", "search_files", `{"path":"docs","pattern":"public"}`)
	if err != nil || out.IsError || !strings.Contains(out.Content, "public") {
		t.Errorf("search through the legitimate link: %+v %v", out, err)
	}
}

// TestPipeline_Symlink_SwappedAfterVerdict: a link put in place of a
// directory after Shield allowed a read through it (TOCTOU) is refused by
// the executor, not followed: what runs is what was judged.
func TestPipeline_Symlink_SwappedAfterVerdict(t *testing.T) {
	lw := newLinkWorkspace(t)
	ctx := context.Background()
	swapped := false
	lw.f.p.OnVerdict = func(_, _ string, _ uint64, v *event.ShieldVerdict) {
		if swapped || v.Decision != event.Allow {
			return
		}
		// Between the verdict and the execution: plain -> secrets.
		if err := os.Rename(filepath.Join(lw.ws, "plain"), filepath.Join(lw.ws, "plain.old")); err != nil {
			t.Error(err)
		}
		if err := os.Symlink("secrets", filepath.Join(lw.ws, "plain")); err != nil {
			t.Error(err)
		}
		swapped = true
	}
	for _, c := range []struct{ tool, args string }{
		{"read_file", `{"path":"plain/key"}`},
	} {
		out, err := lw.f.p.Handle(ctx, "s1", "", "m1", "t1", c.tool, c.args)
		if err != nil {
			t.Fatal(err)
		}
		if !swapped {
			t.Fatalf("the link was not swapped in: %+v", out)
		}
		if strings.Contains(out.Content, symlinkSecret) || !out.IsError {
			t.Errorf("%s %s after the swap: %+v, want refused", c.tool, c.args, out)
		}
	}
	// A link swapped in under the judged resolution of a legitimate link
	// is refused too: docs -> pub judged, then pub becomes a link.
	swapped = false
	lw.f.p.OnVerdict = func(_, _ string, _ uint64, v *event.ShieldVerdict) {
		if swapped || v.Decision != event.Allow {
			return
		}
		if err := os.Rename(filepath.Join(lw.ws, "pub"), filepath.Join(lw.ws, "pub.old")); err != nil {
			t.Error(err)
		}
		if err := os.Symlink("secrets", filepath.Join(lw.ws, "pub")); err != nil {
			t.Error(err)
		}
		if err := os.WriteFile(filepath.Join(lw.ws, "secrets", "a.txt"), []byte(symlinkSecret), 0o644); err != nil {
			t.Error(err)
		}
		swapped = true
	}
	out, err := lw.f.p.Handle(ctx, "s1", "", "m1", "t2", "read_file", `{"path":"docs/a.txt"}`)
	if err != nil {
		t.Fatal(err)
	}
	if !swapped || strings.Contains(out.Content, symlinkSecret) || !out.IsError {
		t.Errorf("read through docs after pub was swapped for a link: %+v (swapped %v), want refused", out, swapped)
	}
}

// TestPipeline_Symlink_CommandPaths: a command line's paths are judged
// where they lead through the workspace's symlinks too — a path through a
// link, and a relative path in a cwd that is a link — while a command on
// the legitimate link is not blocked for it.
func TestPipeline_Symlink_CommandPaths(t *testing.T) {
	lw := newLinkWorkspace(t)
	reg, err := executor.NewRegistry(executor.NewFiles(lw.w), executor.NewEdits(lw.w), executor.NewSearch(lw.w),
		executor.NewShell(lw.w, executor.ShellConfig{})) // no launcher: nothing would run; only verdicts are looked at
	if err != nil {
		t.Fatal(err)
	}
	lw.f.p.Tools = reg
	ctx := context.Background()
	for i, args := range []map[string]any{
		{"command": "cat s/key"},
		{"command": "cat c1/key > pub/copy"},
		{"command": "cat key", "cwd": "s"},
		{"command": "grep -r SECRET docs/up"},
		{"command": "cat s/*"},
		{"command": "grep -R SECRET pub"},  // pub/up -> ../secrets, followed by -R
		{"command": "grep -R SECRET docs"}, // the same through the legitimate link
		{"command": "head c1/k?y"},
	} {
		b, _ := json.Marshal(args)
		id := fmt.Sprint("x", i)
		out, err := lw.f.p.Handle(ctx, "s1", "", "m1", id, "execute_command", string(b))
		if err != nil {
			t.Fatal(err)
		}
		vs := lw.verdicts(t, id)
		if len(vs) == 0 || vs[0].Decision != event.Block || vs[0].Rule != "policy:no-secrets" || !strings.Contains(vs[0].Reason, "symlink") {
			t.Errorf("%s: %+v, verdicts %+v: want blocked by no-secrets through the symlink", b, out, vs)
		}
	}
	b, _ := json.Marshal(map[string]any{"command": "cat docs/a.txt"})
	if _, err := lw.f.p.Handle(ctx, "s1", "", "m1", "ok", "execute_command", string(b)); err != nil {
		t.Fatal(err)
	}
	if vs := lw.verdicts(t, "ok"); len(vs) == 0 || vs[0].Decision == event.Block {
		t.Errorf("cat docs/a.txt: verdicts %+v, want not blocked", vs)
	}
}

// TestShieldEvaluator_Symlink_MCPPaths: an MCP server follows every
// symlink, so the path values of an MCP call are judged where they lead
// when the call is proposed, absolute or relative.
func TestShieldEvaluator_Symlink_MCPPaths(t *testing.T) {
	lw := newLinkWorkspace(t)
	ev := lw.f.p.Evaluator.(judge.ShieldEvaluator)
	for _, c := range []struct {
		path string
		deny bool
	}{
		{filepath.Join(lw.ws, "s", "key"), true},
		{filepath.Join(lw.ws, "c1"), true},
		{"k", true},
		{filepath.Join(lw.ws, "docs", "a.txt"), false},
	} {
		args, _ := json.Marshal(map[string]any{"path": c.path})
		prop := judge.Proposal{Session: "s1", CallID: "m", Tool: "mcp__fs__read_text_file", Args: args, Known: true,
			Def: executor.ToolDef{Name: "mcp__fs__read_text_file"}}
		prop.Links = ev.Links(prop)
		v := engine.Decide(ev.Evaluate(context.Background(), prop))
		if got := v.Decision == event.Block && strings.Contains(v.Reason, "symlink"); got != c.deny {
			t.Errorf("%s (links %v): %+v, want blocked through the symlink: %v", c.path, prop.Links, v, c.deny)
		}
	}
}

// TestWhatIf_Symlink_RecordedLinks: the links a proposal went through are
// recorded with it (tool.proposed "links"), and what-if judges those, not
// the filesystem of the day: with the link gone, the verdict is the same.
func TestWhatIf_Symlink_RecordedLinks(t *testing.T) {
	lw := newLinkWorkspace(t)
	ctx := context.Background()
	z := strings.Repeat("0", 64)
	for _, p := range []event.Payload{&event.EngineStarted{Version: "test", PID: 1, Workspace: lw.ws, ConfigHash: z, Policy: "p",
		PolicyHash: z, Provider: "scripted", Model: "m", Shield: &event.ShieldEnv{Home: "/home/nobody"}}} {
		if _, err := lw.f.p.Recorder.Record(ctx, ledger.Sync, "", p); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := lw.f.p.Recorder.Record(ctx, ledger.Sync, "s1", &event.SessionCreated{Mode: "normal"}); err != nil {
		t.Fatal(err)
	}
	for i, c := range []string{`{"path":"s/key"}`, `{"path":"docs/a.txt"}`} {
		if _, err := lw.f.p.Handle(ctx, "s1", "", "m1", fmt.Sprint("w", i), "read_file", c); err != nil {
			t.Fatal(err)
		}
	}
	if err := lw.f.l.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	rec, err := rerun.Load(lw.f.l, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Proposals) != 2 || rec.Proposals[0].Links["s/key"] != "secrets/key" || rec.Proposals[1].Links["docs/a.txt"] != "pub/a.txt" {
		t.Fatalf("recorded proposals do not carry their links: %+v", rec.Proposals)
	}
	for _, l := range []string{"s", "docs"} {
		if err := os.Remove(filepath.Join(lw.ws, l)); err != nil {
			t.Fatal(err)
		}
	}
	policy, _ := shield.ParsePolicy([]byte("version: 1\ndefault: allow\ndeny:\n  - name: no-secrets\n    paths: [\"secrets/**\", \"secrets\"]\n"))
	rep, err := redrive.WhatIf(rec, policy)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Changes) != 0 {
		t.Errorf("what-if under the same policy, the links gone: %+v, want no change", rep.Changes)
	}
	// Under a policy that allows secrets but denies pub, the recorded
	// link decides: the read of docs/a.txt would be blocked.
	other, _ := shield.ParsePolicy([]byte("version: 1\ndefault: allow\ndeny:\n  - name: no-pub\n    paths: [\"pub/**\"]\n"))
	rep, err = redrive.WhatIf(rec, other)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Changes) != 2 || rep.Changes[0].New.Decision == rep.Changes[1].New.Decision {
		t.Errorf("what-if under no-pub: %+v, want s/key allowed and docs/a.txt blocked", rep.Changes)
	}
}

// TestRerun_Symlink_RecordedLinks: a live engine (engine.New gives Shield
// the workspace) judges a read through a link into a denied tree and one
// through a legitimate link, and records where each led; a rerun, which
// touches no workspace, judges the recorded links and reproduces the
// session identically.
func TestRerun_Symlink_RecordedLinks(t *testing.T) {
	transcript := `{"model": "link-test-1", "turns": [
 {"match": "(?i)read", "steps": [
  {"tool_calls": [{"name": "read_file", "arguments": "{\"path\": \"s/key\"}"}, {"name": "read_file", "arguments": "{\"path\": \"docs/a.txt\"}"}]},
  {"text": "Done: {{.LastResult}}"}
 ]}
]}`
	policy := strings.Replace(replayPolicy, "deny:\n", "deny:\n  - name: no-secrets\n    paths: [\"secrets/**\"]\n", 1)
	r := recordSession(t, recordSpec{transcript: transcript, policy: policy,
		files:    map[string]string{"secrets/key": symlinkSecret + "\n", "pub/a.txt": "public\n"},
		links:    map[string]string{"s": "secrets", "docs": "pub"},
		messages: []string{"read them"}})
	l, err := ledger.OpenReadOnly(r.path)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := rerun.Load(l, r.session)
	l.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Proposals) != 2 || rec.Proposals[0].Links["s/key"] != "secrets/key" || rec.Proposals[1].Links["docs/a.txt"] != "pub/a.txt" {
		t.Fatalf("proposals and their links: %+v", rec.Proposals)
	}
	if v := rec.Proposals[0].Verdicts; len(v) == 0 || v[0].Decision != event.Block || !strings.Contains(v[0].Reason, "symlink") {
		t.Errorf("s/key: verdicts %+v, want blocked through the symlink", v)
	}
	if c := rec.Proposals[1].Completed; c == nil || !strings.Contains(c.Result, "public") {
		t.Errorf("docs/a.txt: %+v, want read through the legitimate link", c)
	}
	if rep := rerunSession(t, r.path, r.session); !rep.Identical {
		d := rep.Divergence
		t.Fatalf("rerun diverged at seq %d (%s, %s): notes %v\n%s", d.Seq, d.Type, d.Kind, rep.Notes, d.Diff)
	}
}

// TestPipeline_Symlink_ProtectedConfig: opx's configuration (.opx) is
// protected by tier -1 through a link to it as it is by name.
func TestPipeline_Symlink_ProtectedConfig(t *testing.T) {
	lw := newLinkWorkspace(t)
	if err := os.MkdirAll(filepath.Join(lw.ws, ".opx"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(lw.ws, ".opx", "policy.yaml"), []byte("version: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for l, target := range map[string]string{"cfg": ".opx", "pol": ".opx/policy.yaml"} {
		if err := os.Symlink(target, filepath.Join(lw.ws, l)); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	for i, c := range []struct{ tool, args string }{
		{"read_file", `{"path":"cfg/policy.yaml"}`},
		{"read_file", `{"path":"pol"}`},
		{"list_directory", `{"path":"cfg"}`},
		{"edit_file", `{"path":"cfg/policy.yaml","old":"1","new":"2"}`},
	} {
		id := fmt.Sprint("p", i)
		out, err := lw.f.p.Handle(ctx, "s1", "", "m1", id, c.tool, c.args)
		if err != nil {
			t.Fatal(err)
		}
		vs := lw.verdicts(t, id)
		if !out.IsError || len(vs) != 1 || vs[0].Rule != "protected:config" || !strings.Contains(vs[0].Reason, "symlink") {
			t.Errorf("%s %s: %+v, verdicts %+v: want protected:config through the symlink", c.tool, c.args, out, vs)
		}
	}
}
