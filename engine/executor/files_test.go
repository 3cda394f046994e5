package executor_test

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opx-dev/opx/engine/executor"
)

// fixture builds a workspace beside a secret outside it, with links that
// try to reach the secret.
func fixture(t *testing.T) (*executor.Registry, string) {
	t.Helper()
	top := t.TempDir()
	ws := filepath.Join(top, "ws")
	must(t, os.MkdirAll(filepath.Join(ws, "src", "deep"), 0o755))
	must(t, os.WriteFile(filepath.Join(top, "secret.txt"), []byte("TOP SECRET"), 0o600))
	must(t, os.WriteFile(filepath.Join(ws, "README.md"), []byte("# hello\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(ws, "src", "main.go"), []byte("package main\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(ws, "bin.dat"), []byte{0x7f, 'E', 'L', 'F', 0, 1}, 0o644))
	must(t, os.WriteFile(filepath.Join(ws, "big.txt"), []byte(strings.Repeat("a", executor.MaxReadBytes+10)), 0o644))
	must(t, os.Symlink(filepath.Join(top, "secret.txt"), filepath.Join(ws, "abs-link")))
	must(t, os.Symlink("../secret.txt", filepath.Join(ws, "rel-link")))
	must(t, os.Symlink("../../..", filepath.Join(ws, "src", "deep", "up")))
	must(t, os.Symlink("README.md", filepath.Join(ws, "inside-link")))
	must(t, os.Symlink(top, filepath.Join(ws, "dir-out")))
	w, err := executor.OpenWorkspace(ws)
	must(t, err)
	t.Cleanup(func() { w.Close() })
	reg, err := executor.NewRegistry(executor.NewFiles(w))
	must(t, err)
	return reg, ws
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func call(reg *executor.Registry, tool, args string) executor.Result {
	return reg.Execute(context.Background(), executor.Call{ID: "c1", Tool: tool, Args: json.RawMessage(args)})
}

// TestFiles_ReadFile_JudgedLink: a path that went through a symlink is
// opened as Shield judged it (Call.Links), following no symlink; a
// judged resolution outside the workspace is not opened.
func TestFiles_ReadFile_JudgedLink(t *testing.T) {
	reg, _ := fixture(t)
	for _, tc := range []struct {
		path, judged string
		wantErr      bool
		want         string
	}{
		{"inside-link", "README.md", false, "# hello"},
		{"inside-link", "/elsewhere/README.md", true, "symlink"},
		{"dir-out/secret.txt", "dir-out/secret.txt", true, "symlink"},
	} {
		args, _ := json.Marshal(map[string]string{"path": tc.path})
		r := reg.Execute(context.Background(), executor.Call{ID: "c1", Tool: "read_file", Args: args, Links: map[string]string{tc.path: tc.judged}})
		if r.IsError != tc.wantErr || !strings.Contains(r.Content, tc.want) || strings.Contains(r.Content, "TOP SECRET") {
			t.Errorf("%s judged as %s: %+v, want error=%v containing %q", tc.path, tc.judged, r, tc.wantErr, tc.want)
		}
	}
}

func TestFiles_ReadFile(t *testing.T) {
	reg, _ := fixture(t)
	for _, tc := range []struct {
		name, args string
		wantErr    bool
		want       string // substring of Content
	}{
		{"plain", `{"path":"README.md"}`, false, "# hello"},
		{"nested", `{"path":"src/main.go"}`, false, "package main"},
		// A link inside is followed only as Shield judged it (Call.Links,
		// TestFiles_ReadFile_JudgedLink); unjudged, it is refused.
		{"symlink inside, not judged", `{"path":"inside-link"}`, true, "symlink"},
		{"dot segments inside", `{"path":"src/../README.md"}`, false, "# hello"},
		{"absolute symlink out", `{"path":"abs-link"}`, true, "symlink"},
		{"relative symlink out", `{"path":"rel-link"}`, true, "symlink"},
		{"dotdot", `{"path":"../secret.txt"}`, true, "outside the workspace"},
		{"dir symlink out", `{"path":"dir-out/secret.txt"}`, true, "symlink"},
		{"deep climb", `{"path":"src/deep/up/secret.txt"}`, true, "symlink"},
		{"absolute path", `{"path":"/etc/passwd"}`, true, "absolute paths are not allowed"},
		{"proc magic link", `{"path":"../../../../proc/self/root/etc/passwd"}`, true, "outside the workspace"},
		{"missing", `{"path":"nope.txt"}`, true, "no such file"},
		{"directory", `{"path":"src"}`, true, "not a regular file"},
		{"binary", `{"path":"bin.dat"}`, true, "looks binary"},
		{"nul in path", `{"path":"READ\u0000ME.md"}`, true, "NUL"},
		{"empty path", `{"path":""}`, true, "empty path"},
		{"unknown argument", `{"path":"README.md","mode":"x"}`, true, "invalid arguments"},
		{"wrong type", `{"path":7}`, true, "invalid arguments"},
		{"not json", `{"path":`, true, "invalid arguments"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := call(reg, "read_file", tc.args)
			if r.IsError != tc.wantErr || !strings.Contains(r.Content, tc.want) {
				t.Errorf("got %+v, want error=%v containing %q", r, tc.wantErr, tc.want)
			}
			if strings.Contains(r.Content, "TOP SECRET") {
				t.Fatal("secret leaked")
			}
		})
	}
}

func TestFiles_ReadFile_Truncated(t *testing.T) {
	reg, _ := fixture(t)
	r := call(reg, "read_file", `{"path":"big.txt"}`)
	if r.IsError || !r.Truncated || !strings.HasSuffix(r.Content, "[truncated: showing 262144 of 262154 bytes]") {
		t.Errorf("got error=%v truncated=%v tail=%q", r.IsError, r.Truncated, r.Content[len(r.Content)-60:])
	}
}

func TestFiles_ListDirectory(t *testing.T) {
	reg, _ := fixture(t)
	r := call(reg, "list_directory", `{"path":"."}`)
	want := "README.md\nabs-link\nbig.txt\nbin.dat\ndir-out\ninside-link\nrel-link\nsrc/\n"
	if r.IsError || r.Content != want {
		t.Errorf("got %q, want %q", r.Content, want)
	}
	if r := call(reg, "list_directory", `{"path":"dir-out"}`); !r.IsError {
		t.Errorf("listing through a symlink out succeeded: %q", r.Content)
	}
	if r := call(reg, "list_directory", `{"path":"README.md"}`); !r.IsError {
		t.Errorf("listing a file succeeded")
	}
}

func TestWorkspace_Open_ErrnoIsExposed(t *testing.T) {
	_, ws := fixture(t)
	w, err := executor.OpenWorkspace(ws)
	must(t, err)
	defer w.Close()
	_, err = w.Open("missing", os.O_RDONLY, 0)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("err = %v, want fs.ErrNotExist", err)
	}
}

func TestRegistry_Groups(t *testing.T) {
	reg, _ := fixture(t)
	defs, unknown := reg.Group("files", "nope")
	if len(defs) != 2 || defs[0].Name != "list_directory" || len(unknown) != 1 || unknown[0] != "nope" {
		t.Errorf("defs %+v unknown %v", defs, unknown)
	}
	if r := call(reg, "write_file", `{}`); !r.IsError {
		t.Error("unknown tool executed")
	}
	if _, err := executor.NewRegistry(executor.NewFiles(nil), executor.NewFiles(nil)); err == nil {
		t.Error("duplicate tool names accepted")
	}
}
