package cli_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/opx-dev/opx/cli"
	"github.com/opx-dev/opx/ledger"
)

// runIn is run with stdin.
func runIn(t *testing.T, stdin io.Reader, args ...string) result {
	t.Helper()
	app := cli.NewApp()
	var out, errOut bytes.Buffer
	app.Reader, app.Writer, app.ErrWriter = stdin, &out, &errOut
	release := lockSetup(app)
	err := app.Run(append([]string{"opx"}, args...))
	release()
	return result{stdout: out.String(), stderr: errOut.String(), code: cli.ExitCode(err), err: err}
}

// evalEnv makes a workspace with a fixed home and state directory and
// returns the workspace and the state directory's root.
func evalEnv(t *testing.T) (ws, state string) {
	t.Helper()
	root := t.TempDir()
	ws, state = filepath.Join(root, "ws"), filepath.Join(root, "state")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", filepath.Join(root, "home"))
	t.Setenv("XDG_STATE_HOME", state)
	t.Setenv(cli.EnvLedger, "")
	return ws, state
}

// evalLines decodes every stdout line of an eval run.
func evalLines(t *testing.T, r result) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("output line is not a JSON object: %v\n%s", err, l)
		}
		out = append(out, m)
	}
	return out
}

func TestShieldEval_GoodAndBadLines(t *testing.T) {
	ws, _ := evalEnv(t)
	in := strings.Join([]string{
		`{"tool":"read_file","arguments":{"path":"main.go"},"id":"read"}`,
		`{"tool":"read_file","arguments":{"path":"~/.ssh/id_rsa"},"id":7}`,
		`not json`,
		`[1,2]`,
		``,
		`{"arguments":{}}`,
		`{"tool":"read_file","arguments":"main.go","id":"str-args"}`,
		`{"tool":"read_file","arguments":{"n":1.5}}`,
		`{"tool":"delete_file","arguments":{"path":"../../etc/passwd"}}`,
		`{"tool":"no_such_tool","arguments":{}}`,
		`{"tool":"git_status"}`,
	}, "\n") // the last line has no newline
	r := runIn(t, strings.NewReader(in), "shield", "eval", "--workspace", ws)
	r.wantCode(t, cli.ExitError)
	r.wantErr(t, "5 bad line(s) in standard input")
	got := evalLines(t, r)
	if len(got) != 10 {
		t.Fatalf("%d output lines, want 10 (the blank line prints nothing):\n%s", len(got), r.stdout)
	}
	want := []struct {
		id, decision, rule string
		line               float64
	}{
		{id: "read", decision: "allow"},
		{decision: "block", rule: "credential-path"},
		{line: 3},
		{line: 4},
		{line: 6},
		{line: 7, id: "str-args"},
		{line: 8},
		{decision: "block", rule: "policy:outside-workspace-writes"},
		{decision: "escalate"},
		{decision: "allow"}, // reads need no path: git_status reads the workspace
	}
	for i, w := range want {
		g := got[i]
		if w.line != 0 {
			if g["line"] != w.line || g["error"] == nil || g["decision"] != nil {
				t.Errorf("line %d: got %v, want an error for line %v", i+1, g, w.line)
			}
			if w.id != "" && g["id"] != w.id {
				t.Errorf("line %d: id %v, want %q echoed", i+1, g["id"], w.id)
			}
			continue
		}
		if g["decision"] != w.decision || (w.rule != "" && g["rule"] != w.rule) {
			t.Errorf("line %d: got %v, want %s %s", i+1, g, w.decision, w.rule)
		}
		if vs, ok := g["verdicts"].([]any); !ok || len(vs) == 0 {
			t.Errorf("line %d: no verdicts: %v", i+1, g)
		}
		if _, ok := g["tier"].(float64); !ok {
			t.Errorf("line %d: no tier: %v", i+1, g)
		}
	}
	if got[0]["id"] != "read" || got[1]["id"] != float64(7) {
		t.Errorf("ids not echoed: %v %v", got[0]["id"], got[1]["id"])
	}
	if got[8]["unknown_tool"] != true || got[9]["unknown_tool"] != nil {
		t.Errorf("unknown_tool: %v / %v", got[8], got[9])
	}
}

// TestShieldEval_AllGood exits 0, reading a file argument.
func TestShieldEval_AllGood(t *testing.T) {
	ws, _ := evalEnv(t)
	f := filepath.Join(t.TempDir(), "p.jsonl")
	if err := os.WriteFile(f, []byte(`{"tool":"list_directory","arguments":{"path":"."}}`+"\r\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, "shield", "eval", "--workspace", ws, f)
	r.wantCode(t, cli.ExitOK)
	if g := evalLines(t, r); len(g) != 1 || g[0]["decision"] != "allow" {
		t.Fatalf("got %v", g)
	}
	run(t, "shield", "eval", "--workspace", ws, f, "extra").wantCode(t, cli.ExitUsage)
	run(t, "shield", "eval", "--workspace", ws, filepath.Join(ws, "missing.jsonl")).wantCode(t, cli.ExitError)
}

const evalDenyReads = `version: 1
default: verify
deny:
  - name: no-reading-secrets-dir
    tools: [read_file]
    paths: ["secrets/**"]
allow:
  - name: everything-else
    tools: ["*"]
`

// TestShieldEval_PolicyFile judges with --policy; the policy file is
// read-only to tools, as the engine makes it.
func TestShieldEval_PolicyFile(t *testing.T) {
	ws, _ := evalEnv(t)
	pol := filepath.Join(ws, "policies", "strict.yaml")
	if err := os.MkdirAll(filepath.Dir(pol), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pol, []byte(evalDenyReads), 0o644); err != nil {
		t.Fatal(err)
	}
	in := `{"tool":"read_file","arguments":{"path":"secrets/a.txt"}}
{"tool":"read_file","arguments":{"path":"src/a.txt"}}
{"tool":"write_file","arguments":{"path":"policies/strict.yaml","content":"x"}}
`
	r := runIn(t, strings.NewReader(in), "shield", "eval", "--workspace", ws, "--policy", pol)
	r.wantCode(t, cli.ExitOK)
	g := evalLines(t, r)
	if len(g) != 3 || g[0]["rule"] != "policy:no-reading-secrets-dir" || g[0]["decision"] != "block" ||
		g[1]["decision"] != "allow" || g[2]["rule"] != "protected:config" {
		t.Fatalf("got %v", g)
	}
	// Without --policy: the built-in default, which reads secrets/ freely.
	r = runIn(t, strings.NewReader(in), "shield", "eval", "--workspace", ws)
	if g := evalLines(t, r); g[0]["decision"] != "allow" {
		t.Fatalf("default policy: got %v", g[0])
	}
	// A policy that does not parse is an operational error before any line.
	bad := filepath.Join(ws, "bad.yaml")
	if err := os.WriteFile(bad, []byte("version: 9\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = runIn(t, strings.NewReader(in), "shield", "eval", "--workspace", ws, "--policy", bad)
	r.wantCode(t, cli.ExitError)
	r.wantErr(t, "policy")
}

// TestShieldEval_WorkspacePolicy uses the policy the workspace's
// .opx/config.yaml names, as opx start would.
func TestShieldEval_WorkspacePolicy(t *testing.T) {
	ws, _ := evalEnv(t)
	if err := os.MkdirAll(filepath.Join(ws, ".opx"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, ".opx", "policy.yaml"), []byte(evalDenyReads), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, ".opx", "config.yaml"), []byte("policy: .opx/policy.yaml\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runIn(t, strings.NewReader(`{"tool":"read_file","arguments":{"path":"secrets/k"}}`), "shield", "eval", "--workspace", ws)
	r.wantCode(t, cli.ExitOK)
	if g := evalLines(t, r); len(g) != 1 || g[0]["rule"] != "policy:no-reading-secrets-dir" {
		t.Fatalf("got %v", g)
	}
}

// TestShieldEval_HugeLine reports a line over 1 MiB and judges the next.
func TestShieldEval_HugeLine(t *testing.T) {
	ws, _ := evalEnv(t)
	huge := `{"tool":"write_file","arguments":{"path":"a","content":"` + strings.Repeat("x", 3<<20) + `"}}`
	just := `{"tool":"write_file","arguments":{"path":"a","content":"` + strings.Repeat("y", 1<<20-60) + `"}}`
	in := huge + "\n" + `{"tool":"git_log","id":"after"}` + "\n" + just + "\n"
	r := runIn(t, strings.NewReader(in), "shield", "eval", "--workspace", ws)
	r.wantCode(t, cli.ExitError)
	g := evalLines(t, r)
	if len(g) != 3 || g[0]["line"] != float64(1) || !strings.Contains(fmt.Sprint(g[0]["error"]), "longer than") ||
		g[1]["id"] != "after" || g[2]["decision"] == nil {
		t.Fatalf("got %d lines: %.300v", len(g), g)
	}
}

// TestShieldEval_Streams judges 800 lines of 50 KB (40 MB) as they come
// and writes each verdict as it goes: the heap never holds the input (it
// grows about 3 MiB over what the process held before the run; the bound
// is 12 MiB of growth — measured from before the run, so the tables
// compiled at start, Shield's expressions and their prefilters, 14 MiB
// since session 18, are not counted as input). The size of the input,
// not the count of judgments, is what the bound is about, so the lines
// are long and few (20,000 lines of 5 KB took 33 s under -race).
func TestShieldEval_Streams(t *testing.T) {
	if testing.Short() {
		t.Skip("40 MB of proposals")
	}
	ws, _ := evalEnv(t)
	const n = 800
	pad := strings.Repeat("p", 50_000)
	pr, pw := io.Pipe()
	go func() {
		bw := bufio.NewWriter(pw)
		for i := range n {
			fmt.Fprintf(bw, `{"tool":"read_file","arguments":{"path":"src/%d.go"},"id":"%s"}`+"\n", i, pad)
		}
		bw.Flush()
		pw.Close()
	}()
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	w := &heapWatch{}
	app := cli.NewApp()
	var errOut bytes.Buffer
	app.Reader, app.Writer, app.ErrWriter = pr, w, &errOut
	release := lockSetup(app)
	err := app.Run([]string{"opx", "shield", "eval", "--workspace", ws})
	release()
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	if w.lines != n {
		t.Fatalf("%d output lines, want %d", w.lines, n)
	}
	if grew := int64(w.maxHeap) - int64(before.HeapAlloc); grew > 12<<20 {
		t.Fatalf("heap grew %d MiB (from %d MiB) over 40 MB of input: the input is held", grew>>20, before.HeapAlloc>>20)
	}
}

// heapWatch counts output lines and samples the heap every 200 lines.
type heapWatch struct {
	lines   int
	maxHeap uint64
}

func (w *heapWatch) Write(p []byte) (int, error) {
	for _, c := range p {
		if c != '\n' {
			continue
		}
		w.lines++
		if w.lines%200 == 0 {
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			w.maxHeap = max(w.maxHeap, ms.HeapAlloc)
		}
	}
	return len(p), nil
}

// TestShieldEval_WritesNothing: eval creates no state directory and
// nothing in the workspace, and still protects the state directory it
// would be.
func TestShieldEval_WritesNothing(t *testing.T) {
	ws, state := evalEnv(t)
	in := `{"tool":"execute_command","arguments":{"command":"ls"}}
{"tool":"memory_append","arguments":{"text":"note"}}
`
	r := runIn(t, strings.NewReader(in), "shield", "eval", "--workspace", ws)
	r.wantCode(t, cli.ExitOK)
	g := evalLines(t, r)
	if len(g) != 2 {
		t.Fatalf("got %v", g)
	}
	if _, err := os.Stat(state); !os.IsNotExist(err) {
		t.Errorf("state dir %s exists after eval (%v)", state, err)
	}
	if ents, _ := os.ReadDir(ws); len(ents) != 0 {
		t.Errorf("eval wrote in the workspace: %v", ents)
	}
	// The state directory the engine would use is protected by name.
	id := workspaceStateDir(t, ws, state)
	r = runIn(t, strings.NewReader(`{"tool":"read_file","arguments":{"path":"`+id+`/ledger.db"}}`), "shield", "eval", "--workspace", ws)
	if g := evalLines(t, r); len(g) != 1 || g[0]["rule"] != "protected:state" {
		t.Fatalf("reading the workspace's ledger: got %v", g)
	}
}

// workspaceStateDir is where the engine keeps ws's ledger under state.
func workspaceStateDir(t *testing.T, ws, state string) string {
	t.Helper()
	id, err := ledger.WorkspaceID(ws)
	if err != nil {
		t.Fatal(err)
	}
	p, err := ledger.DefaultPath(id)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(p, state) {
		t.Fatalf("ledger path %s not under %s", p, state)
	}
	return filepath.Dir(p)
}

func TestShieldEval_Help(t *testing.T) {
	r := run(t, "shield", "eval", "--help")
	r.wantCode(t, cli.ExitOK)
	r.wantOut(t, "EXAMPLE:", "opx shield eval", "--policy", "EXIT CODES:")
}

// TestShieldEval_Features prints the learned scorer's features with
// --features, whatever the verdict, and only then.
func TestShieldEval_Features(t *testing.T) {
	ws, _ := evalEnv(t)
	if err := os.WriteFile(filepath.Join(ws, "routes.nim"), []byte("  if not user.isAdmin: resp Http403, \"forbidden\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	in := `{"tool":"edit_file","arguments":{"path":"routes.nim","old":"  if not user.isAdmin: resp Http403, \"forbidden\"","new":"  discard"}}` + "\n" +
		`{"tool":"list_directory","arguments":{"path":"."}}` + "\n"
	r := runIn(t, strings.NewReader(in), "shield", "eval", "--workspace", ws, "--features")
	r.wantCode(t, cli.ExitOK)
	g := evalLines(t, r)
	if len(g) != 2 {
		t.Fatalf("got %v", g)
	}
	fs, _ := g[0]["features"].([]any)
	want := map[string]bool{"tool:edit_file": false, "-c:auth": false, "change:shrinks": false}
	for _, f := range fs {
		if _, ok := want[f.(string)]; ok {
			want[f.(string)] = true
		}
	}
	for f, ok := range want {
		if !ok {
			t.Errorf("features %v lack %s", fs, f)
		}
	}
	if fs, _ := g[1]["features"].([]any); len(fs) == 0 {
		t.Errorf("a listing has no features: %v", g[1])
	}
	// Without the flag, no features.
	r = runIn(t, strings.NewReader(in), "shield", "eval", "--workspace", ws)
	for _, l := range evalLines(t, r) {
		if _, ok := l["features"]; ok {
			t.Fatalf("features without --features: %v", l)
		}
	}
}
