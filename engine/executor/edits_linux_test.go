package executor_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/opx-dev/opx/engine/executor"
)

func editsFixture(t *testing.T) (*executor.Edits, string, string) {
	t.Helper()
	ws, outside := t.TempDir(), t.TempDir()
	w, err := executor.OpenWorkspace(ws)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return executor.NewEdits(w), ws, outside
}

func run(e *executor.Edits, tool string, args map[string]any) executor.Result {
	b, _ := json.Marshal(args)
	return e.Execute(context.Background(), executor.Call{ID: "c", Tool: tool, Args: b})
}

func TestEdits_Happy(t *testing.T) {
	e, ws, _ := editsFixture(t)
	steps := []struct {
		tool string
		args map[string]any
	}{
		{"make_dir", map[string]any{"path": "src/pkg"}},
		{"write_file", map[string]any{"path": "src/pkg/a.go", "content": "package pkg\n\nvar x = 1\n"}},
		{"edit_file", map[string]any{"path": "src/pkg/a.go", "old": "x = 1", "new": "x = 2"}},
		{"move_file", map[string]any{"from": "src/pkg/a.go", "to": "src/b.go"}},
		{"write_file", map[string]any{"path": "tmp.txt", "content": "bye"}},
		{"delete_file", map[string]any{"path": "tmp.txt"}},
		{"delete_file", map[string]any{"path": "src/pkg"}},
	}
	for _, s := range steps {
		if r := run(e, s.tool, s.args); r.IsError {
			t.Fatalf("%s %v: %s", s.tool, s.args, r.Content)
		}
	}
	b, err := os.ReadFile(filepath.Join(ws, "src/b.go"))
	if err != nil || string(b) != "package pkg\n\nvar x = 2\n" {
		t.Errorf("src/b.go = %q, %v", b, err)
	}
	for _, gone := range []string{"tmp.txt", "src/pkg"} {
		if _, err := os.Lstat(filepath.Join(ws, gone)); !os.IsNotExist(err) {
			t.Errorf("%s still exists", gone)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(ws, "src", ".opx-tmp-*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

func TestEdits_Refusals(t *testing.T) {
	e, ws, outside := editsFixture(t)
	os.WriteFile(filepath.Join(outside, "target"), []byte("outside"), 0o644)
	os.Symlink(outside, filepath.Join(ws, "out"))
	os.Symlink(filepath.Join(outside, "target"), filepath.Join(ws, "link"))
	os.WriteFile(filepath.Join(ws, "twice.txt"), []byte("a a"), 0o644)
	os.WriteFile(filepath.Join(ws, "exists.txt"), []byte("x"), 0o644)
	tests := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"write_file", map[string]any{"path": "out/escaped", "content": "x"}, "a symlink on the way"},
		{"write_file", map[string]any{"path": "../escaped", "content": "x"}, "not a file path inside the workspace"},
		{"write_file", map[string]any{"path": "/tmp/escaped", "content": "x"}, "absolute paths are not allowed"},
		{"edit_file", map[string]any{"path": "link", "old": "outside", "new": "pwned"}, ""},
		{"edit_file", map[string]any{"path": "twice.txt", "old": "a", "new": "b"}, "occurs 2 times"},
		{"edit_file", map[string]any{"path": "twice.txt", "old": "zzz", "new": "b"}, "does not occur"},
		{"move_file", map[string]any{"from": "twice.txt", "to": "out/moved"}, "a symlink on the way"},
		{"move_file", map[string]any{"from": "twice.txt", "to": "exists.txt"}, "exists"},
		{"delete_file", map[string]any{"path": "out/target"}, "outside the workspace"},
		{"make_dir", map[string]any{"path": "out/newdir"}, "a symlink on the way"},
		{"write_file", map[string]any{"path": "big", "content": strings.Repeat("x", executor.MaxWriteBytes+1)}, "limit"},
	}
	for _, tt := range tests {
		r := run(e, tt.tool, tt.args)
		if !r.IsError || !strings.Contains(r.Content, tt.want) {
			t.Errorf("%s %v: %+v, want an error containing %q", tt.tool, tt.args["path"], r.Content, tt.want)
		}
	}
	// Writing through a symlink replaces the link; the outside file is untouched.
	if r := run(e, "write_file", map[string]any{"path": "link", "content": "inside now"}); r.IsError {
		t.Fatal(r.Content)
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "target")); string(b) != "outside" {
		t.Errorf("the outside file was written through a symlink: %q", b)
	}
	if fi, _ := os.Lstat(filepath.Join(ws, "link")); fi.Mode()&os.ModeSymlink != 0 {
		t.Error("link is still a symlink")
	}
}

// TestEdits_SymlinkRace swaps a workspace directory for a symlink to the
// outside, over and over, while the agent writes into it: no write may land
// outside.
func TestEdits_SymlinkRace(t *testing.T) {
	e, ws, outside := editsFixture(t)
	dir := filepath.Join(ws, "d")
	os.Mkdir(dir, 0o755)
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
	for i := 0; i < 2000; i++ {
		run(e, "write_file", map[string]any{"path": "d/f", "content": "x"})
		run(e, "move_file", map[string]any{"from": "d/f", "to": "d/g"})
		run(e, "delete_file", map[string]any{"path": "d/g"})
	}
	stop.Store(true)
	wg.Wait()
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Errorf("writes escaped to the outside: %v", ents)
	}
}
