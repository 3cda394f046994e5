package executor_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/opx-dev/opx/engine/executor"
)

func memFixture(t *testing.T) (*executor.Memory, string, string) {
	t.Helper()
	ws, outside := t.TempDir(), t.TempDir()
	w, err := executor.OpenWorkspace(ws)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return executor.NewMemory(w), ws, outside
}

func memCall(m *executor.Memory, tool string, args any) executor.Result {
	b, _ := json.Marshal(args)
	return m.Execute(context.Background(), executor.Call{ID: "c", Tool: tool, Args: b})
}

func readMemory(t *testing.T, ws string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(ws, "MEMORY.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestMemory_Append_Paragraphs(t *testing.T) {
	for _, tc := range []struct {
		name, before string
		mode         os.FileMode // 0: no file before
		texts        []string
		want         string
		wantMode     os.FileMode
	}{
		{"new file", "", 0, []string{"first", "second\n"}, "first\n\nsecond\n", 0o644},
		{"no trailing newline", "# Notes\nold", 0o600, []string{"new"}, "# Notes\nold\n\nnew\n", 0o600},
		{"one trailing newline", "old\n", 0o640, []string{"new"}, "old\n\nnew\n", 0o640},
		{"blank line already", "old\n\n", 0o644, []string{"new"}, "old\n\nnew\n", 0o644},
		{"empty file", "", 0o600, []string{"new"}, "new\n", 0o600},
		{"blank lines around the text", "", 0, []string{"\n\n  indented\nline  \n\n"}, "  indented\nline\n", 0o644},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, ws, _ := memFixture(t)
			p := filepath.Join(ws, "MEMORY.md")
			if tc.mode != 0 {
				must(t, os.WriteFile(p, []byte(tc.before), tc.mode))
				must(t, os.Chmod(p, tc.mode))
			}
			for _, text := range tc.texts {
				if r := memCall(m, "memory_append", map[string]string{"text": text}); r.IsError || !strings.HasPrefix(r.Content, "appended ") {
					t.Fatalf("append %q: %+v", text, r)
				}
			}
			if got := readMemory(t, ws); got != tc.want {
				t.Errorf("MEMORY.md = %q, want %q", got, tc.want)
			}
			if fi, _ := os.Stat(p); fi.Mode().Perm() != tc.wantMode {
				t.Errorf("mode = %v, want %v", fi.Mode().Perm(), tc.wantMode)
			}
			if r := memCall(m, "memory_read", map[string]string{}); r.IsError || r.Content != tc.want {
				t.Errorf("memory_read = %+v, want %q", r, tc.want)
			}
		})
	}
}

func TestMemory_Execute_Refusals(t *testing.T) {
	m, ws, outside := memFixture(t)
	must(t, os.WriteFile(filepath.Join(outside, "target"), []byte("outside secret\n"), 0o644))
	must(t, os.Symlink(filepath.Join(outside, "target"), filepath.Join(ws, "MEMORY.md")))
	for _, tc := range []struct {
		name, tool string
		args       any
		want       string
	}{
		{"append through symlink", "memory_append", map[string]string{"text": "pwned"}, "symbolic link"},
		{"read through symlink", "memory_read", map[string]string{}, "symbolic link"},
		{"search through symlink", "memory_search", map[string]string{"query": "secret"}, "symbolic link"},
		{"missing text", "memory_append", map[string]string{}, "text is required"},
		{"empty text", "memory_append", map[string]string{"text": " \n\n "}, "text is empty"},
		{"nul in text", "memory_append", map[string]string{"text": "a\x00b"}, "NUL"},
		{"text too long", "memory_append", map[string]string{"text": strings.Repeat("x", executor.MaxMemoryAppend+1)}, "limit is 16384"},
		{"text of another tool", "memory_read", map[string]string{"text": "x"}, "invalid arguments"},
		{"query of another tool", "memory_append", map[string]string{"text": "x", "query": "y"}, "invalid arguments"},
		{"unknown argument", "memory_search", map[string]string{"query": "x", "path": "/etc/passwd"}, "invalid arguments"},
		{"wrong type", "memory_append", map[string]int{"text": 7}, "invalid arguments"},
		{"missing query", "memory_search", map[string]string{}, "query is required"},
		{"empty query", "memory_search", map[string]string{"query": "  "}, "query is empty"},
		{"long query", "memory_search", map[string]string{"query": strings.Repeat("q", 2000)}, "limit is 1024"},
		{"unknown tool", "memory_forget", map[string]string{}, "no tool"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := memCall(m, tc.tool, tc.args)
			if !r.IsError || !strings.Contains(r.Content, tc.want) {
				t.Errorf("got %+v, want an error containing %q", r, tc.want)
			}
			if strings.Contains(r.Content, "outside secret") {
				t.Fatal("read through the symlink")
			}
		})
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "target")); string(b) != "outside secret\n" {
		t.Errorf("the file outside was changed: %q", b)
	}
	if fi, _ := os.Lstat(filepath.Join(ws, "MEMORY.md")); fi.Mode()&os.ModeSymlink == 0 {
		t.Error("the symlink was replaced")
	}
}

func TestMemory_Execute_NotRegular(t *testing.T) {
	m, ws, _ := memFixture(t)
	must(t, os.Mkdir(filepath.Join(ws, "MEMORY.md"), 0o755))
	if r := memCall(m, "memory_append", map[string]string{"text": "x"}); !r.IsError || !strings.Contains(r.Content, "not a regular file") {
		t.Errorf("append to a directory: %+v", r)
	}
	if r := memCall(m, "memory_read", map[string]string{}); !r.IsError || !strings.Contains(r.Content, "not a regular file") {
		t.Errorf("read of a directory: %+v", r)
	}
}

func TestMemory_Execute_Empty(t *testing.T) {
	m, _, _ := memFixture(t)
	if r := memCall(m, "memory_read", nil); r.IsError || !strings.Contains(r.Content, "is empty") {
		t.Errorf("read: %+v", r)
	}
	if r := memCall(m, "memory_search", map[string]string{"query": "x"}); r.IsError || !strings.Contains(r.Content, "is empty") {
		t.Errorf("search: %+v", r)
	}
}

func TestMemory_Search(t *testing.T) {
	m, ws, _ := memFixture(t)
	must(t, os.WriteFile(filepath.Join(ws, "MEMORY.md"), []byte(
		"# Memory\n\nThe build uses Go 1.26.\nRun tests with -race.\n\n\nDeploy: via GitHub Actions\r\n\nthe GO proxy is proxy.golang.org\n"), 0o644))
	for _, tc := range []struct {
		query, want string
	}{
		{"go", "lines 3-4:\nThe build uses Go 1.26.\nRun tests with -race.\n\nline 9:\nthe GO proxy is proxy.golang.org\n\n"},
		{"RACE build", "lines 3-4:\nThe build uses Go 1.26.\nRun tests with -race.\n\n"},
		{"deploy github", "line 7:\nDeploy: via GitHub Actions\n\n"},
		{"go deploy", `no paragraph in MEMORY.md contains all of "go", "deploy"` + "\n"},
	} {
		r := memCall(m, "memory_search", map[string]string{"query": tc.query})
		if r.IsError || r.Content != tc.want {
			t.Errorf("search %q = %+v, want %q", tc.query, r, tc.want)
		}
	}
}

func TestMemory_Search_Capped(t *testing.T) {
	m, ws, _ := memFixture(t)
	var b strings.Builder
	for i := 0; i < 30; i++ {
		fmt.Fprintf(&b, "note %d about caching\n\n", i)
	}
	must(t, os.WriteFile(filepath.Join(ws, "MEMORY.md"), []byte(b.String()), 0o644))
	r := memCall(m, "memory_search", map[string]string{"query": "caching"})
	if r.IsError || !r.Truncated || strings.Count(r.Content, "about caching") != executor.MaxMemoryMatches ||
		!strings.HasSuffix(r.Content, "[truncated: showing 20 of 30 matching paragraphs; add words to narrow the query]\n") {
		t.Errorf("got %+v", r)
	}
}

func TestMemory_Execute_HugeFile(t *testing.T) {
	m, ws, _ := memFixture(t)
	para := strings.Repeat("filler ", 100) + "\n\n"
	huge := strings.Repeat(para, 3*executor.MaxMemoryBytes/len(para)) + "needle at the end\n"
	must(t, os.WriteFile(filepath.Join(ws, "MEMORY.md"), []byte(huge), 0o644))
	r := memCall(m, "memory_read", nil)
	if r.IsError || !r.Truncated || len(r.Content) > executor.MaxReadBytes+200 || !strings.Contains(r.Content, "[truncated: showing the first 262144 of") {
		t.Errorf("read: error=%v truncated=%v len=%d tail=%q", r.IsError, r.Truncated, len(r.Content), r.Content[max(0, len(r.Content)-120):])
	}
	r = memCall(m, "memory_search", map[string]string{"query": "needle"})
	if r.IsError || !r.Truncated || !strings.Contains(r.Content, "no paragraph") || !strings.Contains(r.Content, "only the first 1 MiB of MEMORY.md") {
		t.Errorf("search: %+v", r)
	}
	r = memCall(m, "memory_append", map[string]string{"text": "more"})
	if !r.IsError || !strings.Contains(r.Content, "over the 1 MiB limit") {
		t.Errorf("append: %+v", r)
	}
	if readMemory(t, ws) != huge {
		t.Error("a refused append changed MEMORY.md")
	}
	// Just under the cap: an append that would cross it is refused too.
	must(t, os.WriteFile(filepath.Join(ws, "MEMORY.md"), []byte(strings.Repeat("x", executor.MaxMemoryBytes-10)), 0o644))
	if r := memCall(m, "memory_append", map[string]string{"text": "0123456789"}); !r.IsError || !strings.Contains(r.Content, "would grow") {
		t.Errorf("append over the cap: %+v", r)
	}
}

// TestMemory_Append_Concurrent: appends through one Memory are serialised
// by its mutex, so none is lost.
func TestMemory_Append_Concurrent(t *testing.T) {
	m, ws, _ := memFixture(t)
	const n = 32
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r := memCall(m, "memory_append", map[string]string{"text": fmt.Sprintf("note %02d", i)}); r.IsError {
				t.Error(r.Content)
			}
		}()
	}
	wg.Wait()
	got := readMemory(t, ws)
	for i := 0; i < n; i++ {
		if !strings.Contains(got, fmt.Sprintf("note %02d\n", i)) {
			t.Errorf("note %02d lost", i)
		}
	}
	if c := strings.Count(got, "\n\n"); c != n-1 {
		t.Errorf("%d paragraph breaks, want %d:\n%s", c, n-1, got)
	}
}

func TestMemory_Tools(t *testing.T) {
	m, _, _ := memFixture(t)
	mutating := map[string]bool{}
	for _, d := range m.Tools() {
		mutating[d.Name] = d.Mutating
		if d.Group != executor.GroupMemory || !json.Valid(d.InputSchema) || !strings.Contains(string(d.InputSchema), `"additionalProperties":false`) {
			t.Errorf("%s: %+v", d.Name, d)
		}
	}
	if want := map[string]bool{"memory_read": false, "memory_append": true, "memory_search": false}; !reflect.DeepEqual(mutating, want) {
		t.Errorf("mutating = %v, want %v", mutating, want)
	}
	reg, err := executor.NewRegistry(m)
	must(t, err)
	paths, ok, err := reg.Touches(executor.Call{Tool: "memory_append", Args: json.RawMessage(`{"text":"x"}`)})
	if !ok || err != nil || !reflect.DeepEqual(paths, []string{"MEMORY.md"}) {
		t.Errorf("Touches = %v %v %v", paths, ok, err)
	}
	if _, _, err := reg.Touches(executor.Call{Tool: "memory_append", Args: json.RawMessage(`{"text":"x","path":"../x"}`)}); err == nil {
		t.Error("Touches accepted an unknown argument")
	}
}

func TestMemory_Tools_SchemasAreValid(t *testing.T) {
	for _, d := range executor.NewMemory(nil).Tools() {
		var sch map[string]any
		if err := json.Unmarshal(d.InputSchema, &sch); err != nil {
			t.Fatalf("%s: %v", d.Name, err)
		}
		if req, ok := sch["required"]; ok && req == nil {
			t.Errorf("%s: required is null", d.Name)
		}
	}
}
