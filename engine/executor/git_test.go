//go:build linux

package executor_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opx-dev/opx/engine/executor"
)

// gitFixture is a repository in a sandboxed workspace with one commit
// (a.txt), made by the test's own identity with the real git.
func gitFixture(t *testing.T) (shellEnv, *executor.Git) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("git is not installed")
		}
		t.Skip("git is not installed")
	}
	e := shellFixture(t, false)
	os.Remove(filepath.Join(e.dir, "sub"))
	os.WriteFile(filepath.Join(e.dir, "a.txt"), []byte("one\n"), 0o644)
	hostGit(t, e.dir, "init", "-q", "-b", "main")
	hostGit(t, e.dir, "add", "a.txt")
	hostGit(t, e.dir, "commit", "-q", "-m", "initial")
	return e, executor.NewGit(e.ws, executor.GitConfig{Launcher: e.launcher})
}

// hostGit runs git unsandboxed, as the test, with no configuration but
// the repository's.
func hostGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + executor.CommandPath, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=test@example.com", "GIT_COMMITTER_NAME=Test", "GIT_COMMITTER_EMAIL=test@example.com"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func gitCall(g *executor.Git, tool string, args map[string]any) executor.Result {
	b, _ := json.Marshal(args)
	return g.Execute(context.Background(), executor.Call{ID: "c1", Tool: tool, Args: b})
}

func TestGit_Execute_Workflow(t *testing.T) {
	t.Parallel()
	e, g := gitFixture(t)
	os.WriteFile(filepath.Join(e.dir, "a.txt"), []byte("two\n"), 0o644)
	os.WriteFile(filepath.Join(e.dir, "b.txt"), []byte("b\n"), 0o644)
	os.WriteFile(filepath.Join(e.dir, "c.txt"), []byte("c\n"), 0o644)
	steps := []struct {
		tool     string
		args     map[string]any
		contains []string
		absent   []string
	}{
		{"git_status", nil, []string{"## main\n", " M a.txt\n", "?? b.txt\n", "?? c.txt\n"}, nil},
		{"git_diff", nil, []string{"diff --git a/a.txt b/a.txt", "-one\n+two\n"}, nil},
		{"git_diff", map[string]any{"path": "b.txt"}, []string{"(no output)"}, nil},
		{"git_diff", map[string]any{"staged": true}, []string{"(no output)"}, nil},
		{"git_commit", map[string]any{"message": "add b", "paths": []string{"b.txt"}}, []string{"add b", "1 file changed"}, nil},
		{"git_status", nil, []string{" M a.txt\n", "?? c.txt\n"}, []string{"b.txt"}},
		{"git_commit", map[string]any{"message": "--the rest"}, []string{"--the rest", "2 files changed"}, nil},
		{"git_status", nil, []string{"## main\n"}, []string{"a.txt", "c.txt"}},
		{"git_log", map[string]any{"n": 2}, []string{"Author: opx agent <agent@opx.invalid>", "    --the rest\n", "    add b\n"}, []string{"initial"}},
		{"git_log", map[string]any{"path": "b.txt"}, []string{"add b"}, []string{"initial", "the rest"}},
		{"git_log", nil, []string{"Author: Test <test@example.com>", "initial"}, nil},
	}
	for i, s := range steps {
		r := gitCall(g, s.tool, s.args)
		if r.IsError || r.ExitCode != 0 {
			t.Fatalf("step %d %s %v: %+v", i, s.tool, s.args, r)
		}
		for _, want := range s.contains {
			if !strings.Contains(r.Content, want) {
				t.Errorf("step %d %s %v: no %q in\n%s", i, s.tool, s.args, want, r.Content)
			}
		}
		for _, no := range s.absent {
			if strings.Contains(r.Content, no) {
				t.Errorf("step %d %s %v: %q in\n%s", i, s.tool, s.args, no, r.Content)
			}
		}
	}
	// A failing git command is an error result with its status.
	r := gitCall(g, "git_commit", map[string]any{"message": "nothing"})
	if !r.IsError || r.ExitCode != 1 || !strings.HasSuffix(r.Content, "[exit status 1]") {
		t.Errorf("empty commit: %+v", r)
	}
}

// TestGit_Execute_HostileRepository arms every way a repository's
// configuration can make git run a program — hooks (also through
// core.hooksPath), pager, external diff, diff drivers and textconv,
// filter drivers (also behind an include and with "=" in their name),
// fsmonitor, signing — proves with the host's git that they fire, and
// then that the executor's git runs none of them.
func TestGit_Execute_HostileRepository(t *testing.T) {
	t.Parallel()
	e, g := gitFixture(t)
	script := filepath.Join(e.dir, "evil.sh")
	os.WriteFile(script, []byte("#!/bin/sh\necho \"$0 $*\" >> '"+e.dir+"/MARKER'\ncat\n"), 0o755)
	gitDir := filepath.Join(e.dir, ".git")
	for _, dir := range []string{filepath.Join(gitDir, "hooks"), filepath.Join(e.dir, ".githooks")} {
		os.MkdirAll(dir, 0o755)
		for _, hook := range []string{"pre-commit", "prepare-commit-msg", "commit-msg", "post-commit", "pre-auto-gc", "post-index-change"} {
			os.WriteFile(filepath.Join(dir, hook), []byte("#!/bin/sh\necho hook >> '"+e.dir+"/MARKER'\n"), 0o755)
		}
	}
	config := map[string]string{
		"core.pager": script, "pager.log": script, "pager.diff": script, "pager.status": script,
		"diff.external": script, "core.fsmonitor": script,
		"filter.evil.clean": script, "filter.evil.smudge": script, "filter.evil.required": "true",
		"diff.evil.textconv": script, "diff.evil.command": script,
		"log.showSignature": "true", "gpg.program": script, "commit.gpgSign": "true",
		"core.hooksPath": filepath.Join(e.dir, ".githooks"),
		"include.path":   "extra.config",
	}
	for k, v := range config {
		hostGit(t, e.dir, "config", k, v)
	}
	os.WriteFile(filepath.Join(gitDir, "extra.config"), []byte("[filter \"a=b\"]\n\tclean = "+script+"\n\tprocess = "+script+"\n"), 0o644)
	os.WriteFile(filepath.Join(e.dir, ".gitattributes"), []byte("*.txt filter=evil diff=evil\n*.md filter=a=b\n"), 0o644)
	os.WriteFile(filepath.Join(e.dir, "a.txt"), []byte("changed\n"), 0o644)
	os.WriteFile(filepath.Join(e.dir, "n.md"), []byte("note\n"), 0o644)

	// The trap is armed: the host's git, with the repository's
	// configuration, runs the programs.
	marker := filepath.Join(e.dir, "MARKER")
	cmd := exec.Command("git", "diff")
	cmd.Dir, cmd.Env = e.dir, []string{"PATH=" + executor.CommandPath, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null"}
	cmd.Run()
	if b, _ := os.ReadFile(marker); len(b) == 0 {
		t.Fatal("the host's git ran none of the repository's programs: the test proves nothing")
	}
	os.Remove(marker)

	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"git_status", nil},
		{"git_diff", nil},
		{"git_diff", map[string]any{"path": "a.txt"}},
		{"git_commit", map[string]any{"message": "hostile", "paths": []string{"a.txt"}}},
		{"git_diff", map[string]any{"staged": true}},
		{"git_commit", map[string]any{"message": "all"}},
		{"git_log", map[string]any{"n": 3}},
	} {
		r := gitCall(g, c.tool, c.args)
		if r.IsError {
			t.Errorf("%s %v: %+v", c.tool, c.args, r)
		}
		if b, err := os.ReadFile(marker); err == nil {
			t.Fatalf("%s %v ran a repository program:\n%s\nresult: %s", c.tool, c.args, b, r.Content)
		}
	}
	if log := hostGit(t, e.dir, "log", "--format=%s %an", "-n", "2"); log != "all opx agent\nhostile opx agent\n" {
		t.Errorf("log %q", log)
	}
}

func TestGit_Execute_BadArgs(t *testing.T) {
	t.Parallel()
	e, g := gitFixture(t)
	tests := []struct {
		name string
		tool string
		args string
		want string
	}{
		{"DiffOptionInjection", "git_diff", `{"path":"--output=/tmp/opx-git-injected"}`, "must not start with '-'"},
		{"LogOptionInjection", "git_log", `{"path":"-p"}`, "must not start with '-'"},
		{"CommitOptionInjection", "git_commit", `{"message":"m","paths":["--all"]}`, "must not start with '-'"},
		{"Absolute", "git_diff", `{"path":"/etc/passwd"}`, "absolute"},
		{"Outside", "git_log", `{"path":"sub/../../x"}`, "outside the workspace"},
		{"LogZero", "git_log", `{"n":0}`, "between 1 and 200"},
		{"LogTooMany", "git_log", `{"n":201}`, "between 1 and 200"},
		{"EmptyMessage", "git_commit", `{"message":" "}`, "must not be empty"},
		{"NoMessage", "git_commit", `{}`, "must not be empty"},
		{"EmptyPath", "git_commit", `{"message":"m","paths":[""]}`, "empty path"},
		{"StatusTakesNothing", "git_status", `{"path":"a.txt"}`, "unknown field"},
		{"UnknownTool", "git_push", `{}`, "no such tool"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := g.Execute(context.Background(), executor.Call{Tool: tt.tool, Args: json.RawMessage(tt.args)})
			if !r.IsError || !strings.Contains(r.Content, tt.want) {
				t.Errorf("%+v, want an error with %q", r, tt.want)
			}
		})
	}
	if _, err := os.Stat("/tmp/opx-git-injected"); err == nil {
		t.Error("--output was honoured")
	}
	if out := hostGit(t, e.dir, "log", "--format=%s"); out != "initial\n" {
		t.Errorf("a refused call committed: %q", out)
	}
}

// TestGit_Execute_UnreadableConfig: a configuration git cannot list is
// refused, not run unchecked.
func TestGit_Execute_UnreadableConfig(t *testing.T) {
	t.Parallel()
	e, g := gitFixture(t)
	f, err := os.OpenFile(filepath.Join(e.dir, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("[broken\n")
	f.Close()
	r := gitCall(g, "git_status", nil)
	if !r.IsError || !strings.HasPrefix(r.Content, "git_status: cannot check the repository's configuration: ") {
		t.Errorf("%+v", r)
	}
}

func TestGit_Tools_Definition(t *testing.T) {
	e, _ := gitFixture(t)
	defs := executor.NewGit(e.ws, executor.GitConfig{}).Tools()
	want := map[string][2]bool{"git_status": {false, false}, "git_diff": {false, false}, "git_log": {false, false}, "git_commit": {true, true}}
	for _, d := range defs {
		w, ok := want[d.Name]
		if !ok || d.Group != executor.GroupGit || d.Mutating != w[0] || d.WorkspaceWide != w[1] || !json.Valid(d.InputSchema) {
			t.Errorf("definition %+v", d)
		}
		delete(want, d.Name)
	}
	if len(want) != 0 {
		t.Errorf("missing tools %v", want)
	}
}
