package executor

// White-box: the walk's limits are fields, so the tests can lower them
// instead of building trees of 20,000 files.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// searchFixture builds a workspace beside a secret outside it. Every file
// that must not show up in a search for TODO says so in its content.
func searchFixture(t *testing.T) (*Search, string, string) {
	t.Helper()
	top := t.TempDir()
	ws, outside := filepath.Join(top, "ws"), filepath.Join(top, "outside")
	files := map[string]string{
		"README.md":            "# hello\nTODO: write docs\n",
		"a.txt":                "alpha\nTODO one\r\nbeta TODO two\n",
		"src/main.go":          "package main\n\n// TODO: main\nfunc main() {}\n",
		"src/z/deep.go":        "// TODO deep\n",
		"src/long.txt":         "TODO " + strings.Repeat("é", 400) + "\n",
		".git/config":          "TODO in git\n",
		".opx/policy.yaml":     "TODO in opx\n",
		"sub/.git/x":           "TODO in a nested git\n",
		"bin.dat":              "TODO\x00binary\n",
		"late-invalid.txt":     strings.Repeat("a", 9000) + "\nTODO \xff\xfe\n",
		"new\nline.txt":        "TODO forged\n",
		"../outside/secret.md": "TODO SECRET\n",
	}
	for name, body := range files {
		p := filepath.Join(ws, name)
		mustOK(t, os.MkdirAll(filepath.Dir(p), 0o755))
		mustOK(t, os.WriteFile(p, []byte(body), 0o644))
	}
	big := append([]byte("TODO big\n"), make([]byte, MaxSearchFileBytes)...)
	for i := 9; i < len(big); i++ {
		big[i] = 'b'
	}
	mustOK(t, os.WriteFile(filepath.Join(ws, "big.txt"), big, 0o644))
	mustOK(t, os.Symlink(filepath.Join(outside, "secret.md"), filepath.Join(ws, "link-out")))
	mustOK(t, os.Symlink(outside, filepath.Join(ws, "dir-out")))
	mustOK(t, os.Symlink("README.md", filepath.Join(ws, "link-in")))
	w, err := OpenWorkspace(ws)
	mustOK(t, err)
	t.Cleanup(func() { w.Close() })
	return NewSearch(w), ws, outside
}

func mustOK(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func search(s *Search, args map[string]any) Result {
	b, _ := json.Marshal(args)
	return s.Execute(context.Background(), Call{ID: "c", Tool: "search_files", Args: b})
}

func TestSearch_Execute_SortedAndFiltered(t *testing.T) {
	s, _, _ := searchFixture(t)
	want := "README.md:2: TODO: write docs\n" +
		"a.txt:2: TODO one\n" +
		"a.txt:3: beta TODO two\n" +
		"late-invalid.txt:2: TODO \uFFFD\n" +
		"\"new\\nline.txt\":1: TODO forged\n" +
		"src/long.txt:1: TODO " + strings.Repeat("é", 147) + " [...]\n" +
		"src/main.go:3: // TODO: main\n" +
		"src/z/deep.go:1: // TODO deep\n" +
		"[skipped: 1 binary file, 1 file over 2 MiB, 3 symbolic links]\n"
	for i := 0; i < 2; i++ { // the same tree gives the same bytes
		r := search(s, map[string]any{"pattern": "TODO"})
		if r.IsError || r.Truncated || r.Content != want {
			t.Fatalf("run %d: got error=%v truncated=%v\n%s\nwant\n%s", i, r.IsError, r.Truncated, r.Content, want)
		}
	}
}

func TestSearch_Execute_Args(t *testing.T) {
	s, _, _ := searchFixture(t)
	for _, tc := range []struct {
		name      string
		args      map[string]any
		wantErr   bool
		want      string // substring of Content
		truncated bool
	}{
		{"glob", map[string]any{"pattern": "TODO", "glob": "*.go"}, false, "src/main.go:3: // TODO: main\nsrc/z/deep.go:1: // TODO deep\n[skipped: 3 symbolic links]\n", false},
		{"subdirectory", map[string]any{"pattern": "TODO", "path": "src/z"}, false, "src/z/deep.go:1: // TODO deep\n", false},
		{"unclean path", map[string]any{"pattern": "TODO", "path": "./src/../src/z/"}, false, "src/z/deep.go:1:", false},
		{"single file", map[string]any{"pattern": "TODO", "path": "a.txt"}, false, "a.txt:2: TODO one\na.txt:3: beta TODO two\n", false},
		{"regexp", map[string]any{"pattern": `^func \w+\(\)`, "path": "src"}, false, "src/main.go:4: func main() {}\n", false},
		{"case-insensitive flag", map[string]any{"pattern": "(?i)^ALPHA$"}, false, "a.txt:1: alpha\n", false},
		{"max results", map[string]any{"pattern": "TODO", "max_results": 2}, false, "README.md:2: TODO: write docs\na.txt:2: TODO one\n[truncated: more than 2 matching lines; narrow", true},
		{"no match", map[string]any{"pattern": "nothing-here", "path": "src"}, false, `no lines match "nothing-here" in src (3 text files searched)`, false},
		{"git and opx skipped", map[string]any{"pattern": "in (a nested )?(git|opx)"}, false, "no lines match", false},
		{"invalid regexp", map[string]any{"pattern": "a(b"}, true, "not a valid Go regular expression", false},
		{"empty pattern", map[string]any{"pattern": ""}, true, "must not be empty", false},
		{"missing pattern", map[string]any{"path": "."}, true, "must not be empty", false},
		{"huge pattern", map[string]any{"pattern": strings.Repeat("a", 2000)}, true, "limit is 1024", false},
		{"zero results", map[string]any{"pattern": "a", "max_results": 0}, true, "between 1 and 1000", false},
		{"too many results", map[string]any{"pattern": "a", "max_results": 1001}, true, "between 1 and 1000", false},
		{"fractional results", map[string]any{"pattern": "a", "max_results": 1.5}, true, "invalid arguments", false},
		{"unknown argument", map[string]any{"pattern": "a", "recursive": true}, true, "invalid arguments", false},
		{"bad glob", map[string]any{"pattern": "a", "glob": "[z"}, true, "not a valid base-name pattern", false},
		{"glob with a slash", map[string]any{"pattern": "a", "glob": "src/*.go"}, true, "not a valid base-name pattern", false},
		{"dotdot", map[string]any{"pattern": "TODO", "path": ".."}, true, "outside the workspace", false},
		{"absolute", map[string]any{"pattern": "TODO", "path": "/etc"}, true, "absolute paths are not allowed", false},
		{"dir symlink out", map[string]any{"pattern": "TODO", "path": "dir-out"}, true, "never follows links", false},
		{"through dir symlink out", map[string]any{"pattern": "TODO", "path": "dir-out/secret.md"}, true, "symlink", false},
		{"file symlink out", map[string]any{"pattern": "TODO", "path": "link-out"}, true, "never follows links", false},
		{"missing path", map[string]any{"pattern": "TODO", "path": "nope"}, true, "no such file", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := search(s, tc.args)
			if r.IsError != tc.wantErr || r.Truncated != tc.truncated || !strings.Contains(r.Content, tc.want) {
				t.Errorf("got error=%v truncated=%v %q\nwant error=%v truncated=%v containing %q", r.IsError, r.Truncated, r.Content, tc.wantErr, tc.truncated, tc.want)
			}
			if strings.Contains(r.Content, "SECRET") {
				t.Fatal("the secret outside the workspace leaked")
			}
		})
	}
}

func TestSearch_Execute_Limits(t *testing.T) {
	for _, tc := range []struct {
		name   string
		limits searchLimits
		build  func(t *testing.T, ws string)
		args   map[string]any
		want   string
	}{
		{"entries", searchLimits{entries: 5, dirEntries: 100, scan: 1 << 20}, func(t *testing.T, ws string) {
			for i := 0; i < 10; i++ {
				mustOK(t, os.WriteFile(filepath.Join(ws, fmt.Sprintf("f%d", i)), []byte("hit\n"), 0o644))
			}
		}, map[string]any{"pattern": "hit"}, "f0:1: hit\nf1:1: hit\nf2:1: hit\nf3:1: hit\nf4:1: hit\n[truncated: stopped after visiting 5 entries; search a narrower path]\n"},
		{"crowded directory", searchLimits{entries: 100, dirEntries: 3, scan: 1 << 20}, func(t *testing.T, ws string) {
			mustOK(t, os.Mkdir(filepath.Join(ws, "crowd"), 0o755))
			for i := 0; i < 4; i++ {
				mustOK(t, os.WriteFile(filepath.Join(ws, "crowd", fmt.Sprintf("f%d", i)), []byte("hit\n"), 0o644))
			}
			mustOK(t, os.WriteFile(filepath.Join(ws, "z"), []byte("hit\n"), 0o644))
		}, map[string]any{"pattern": "hit"}, "z:1: hit\n[skipped: 1 directory with more than 3 entries]\n"},
		{"bytes scanned", searchLimits{entries: 100, dirEntries: 100, scan: 10}, func(t *testing.T, ws string) {
			mustOK(t, os.WriteFile(filepath.Join(ws, "a"), []byte("hit 1\n"), 0o644))
			mustOK(t, os.WriteFile(filepath.Join(ws, "b"), []byte("hit 2\n"), 0o644))
		}, map[string]any{"pattern": "hit"}, "a:1: hit 1\n[truncated: stopped after reading 0 KiB of files; search a narrower path or use glob]\n"},
		{"depth", NewSearch(nil).limits, func(t *testing.T, ws string) {
			deep := ws
			for i := 0; i <= MaxSearchDepth; i++ {
				deep = filepath.Join(deep, "d")
			}
			mustOK(t, os.MkdirAll(deep, 0o755))
			mustOK(t, os.WriteFile(filepath.Join(filepath.Dir(deep), "ok"), []byte("hit\n"), 0o644))
			mustOK(t, os.WriteFile(filepath.Join(deep, "too-deep"), []byte("hit\n"), 0o644))
		}, map[string]any{"pattern": "hit", "glob": "ok"}, strings.Repeat("d/", MaxSearchDepth) + "ok:1: hit\n[skipped: 1 directory deeper than 64 levels]\n"},
		{"output", NewSearch(nil).limits, func(t *testing.T, ws string) {
			line := strings.Repeat("hit ", 100) + "\n"
			mustOK(t, os.WriteFile(filepath.Join(ws, "many"), []byte(strings.Repeat(line, 1000)), 0o644))
		}, map[string]any{"pattern": "hit", "max_results": 1000}, "[truncated: output reached 64 KiB after 207 matching lines; narrow the pattern, path or glob]\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			tc.build(t, ws)
			w, err := OpenWorkspace(ws)
			mustOK(t, err)
			defer w.Close()
			s := NewSearch(w)
			s.limits = tc.limits
			r := search(s, tc.args)
			if r.IsError || !strings.HasSuffix(r.Content, tc.want) {
				t.Errorf("got error=%v\n%s\nwant suffix\n%s", r.IsError, r.Content, tc.want)
			}
			if len(r.Content) > MaxSearchOutput+200 {
				t.Errorf("output is %d bytes", len(r.Content))
			}
		})
	}
}

func TestSearch_Execute_Cancelled(t *testing.T) {
	s, _, _ := searchFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := s.Execute(ctx, Call{Tool: "search_files", Args: json.RawMessage(`{"pattern":"TODO"}`)})
	if !r.IsError || !strings.Contains(r.Content, "canceled") {
		t.Errorf("got %+v", r)
	}
}

func TestSearch_Tools_Schema(t *testing.T) {
	defs := NewSearch(nil).Tools()
	if len(defs) != 1 || defs[0].Name != "search_files" || defs[0].Group != GroupFiles || defs[0].Mutating {
		t.Fatalf("defs = %+v", defs)
	}
	var sch struct {
		Required             []string `json:"required"`
		AdditionalProperties bool     `json:"additionalProperties"`
	}
	mustOK(t, json.Unmarshal(defs[0].InputSchema, &sch))
	if len(sch.Required) != 1 || sch.Required[0] != "pattern" || sch.AdditionalProperties {
		t.Errorf("schema = %s", defs[0].InputSchema)
	}
	if r := NewSearch(nil).Execute(context.Background(), Call{Tool: "read_file"}); !r.IsError {
		t.Error("search ran another tool")
	}
}

// TestSearch_Execute_SymlinkRace swaps a workspace directory for a symlink
// to the outside while searching it: the secret outside never shows.
func TestSearch_Execute_SymlinkRace(t *testing.T) {
	s, ws, outside := searchFixture(t)
	dir := filepath.Join(ws, "d")
	mustOK(t, os.MkdirAll(filepath.Join(dir, "e"), 0o755))
	mustOK(t, os.WriteFile(filepath.Join(dir, "e", "in.txt"), []byte("TODO inside\n"), 0o644))
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
	for i := 0; i < 300; i++ {
		r := search(s, map[string]any{"pattern": "TODO", "path": "d"})
		if strings.Contains(r.Content, "SECRET") {
			stop.Store(true)
			wg.Wait()
			t.Fatalf("the secret leaked: %s", r.Content)
		}
	}
	stop.Store(true)
	wg.Wait()
}
