package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opx-dev/opx/engine/executor"
)

// FuzzShieldEvalLines feeds arbitrary input to eval's reader (with a
// 64-byte line bound, so that long lines and lines across the reader's
// buffer are common) and checks it against a naive reading: one output
// line, a JSON object with a decision or an error, for every line that is
// not blank, and an error for every line over the bound.
func FuzzShieldEvalLines(f *testing.F) {
	ev, err := evalFor(f.TempDir(), "", "")
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { ev.ws.Close() })
	ev.maxLine = 64
	for _, seed := range []string{
		"", "\n", "\r\n", " \t\n\n",
		`{"tool":"read_file","arguments":{"path":"a"}}`,
		`{"tool":"read_file","arguments":{"path":"a"}}` + "\r\n" + `{"tool":"git_status"}`,
		`{"tool":"write_file","arguments":{"path":"a","content":"` + strings.Repeat("x", 100) + `"}}` + "\n{}\n",
		"nope\n[1]\n\"s\"\nnull\n{\"tool\":1}\n{\"tool\":\"x\",\"arguments\":null}\n",
		strings.Repeat("y", 64) + "\n" + strings.Repeat("z", 65) + "\n" + strings.Repeat("w", 66),
		`{"tool":"x","arguments":{"a":1e3},"id":{"deep":[1]}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var out bytes.Buffer
		bad, err := ev.run(bytes.NewReader(data), &out)
		if err != nil {
			t.Fatal(err)
		}
		wantLines, wantLong := 0, 0
		text := string(data)
		text = strings.TrimSuffix(text, "\n")
		if len(data) > 0 {
			for _, l := range strings.Split(text, "\n") {
				l = strings.TrimSuffix(l, "\r")
				switch {
				case len(l) > 64:
					wantLines++
					wantLong++
				case len(bytes.TrimSpace([]byte(l))) > 0:
					wantLines++
				}
			}
		}
		got, gotErr, gotLong := 0, 0, 0
		sc := bufio.NewScanner(&out)
		for sc.Scan() {
			got++
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Fatalf("output line %d is not a JSON object: %v: %s", got, err, sc.Text())
			}
			_, hasDecision := m["decision"]
			e, hasError := m["error"].(string)
			if hasDecision == hasError {
				t.Fatalf("output line %d has neither or both of decision and error: %s", got, sc.Text())
			}
			if hasError {
				gotErr++
				if strings.Contains(e, "longer than") {
					gotLong++
				}
			}
		}
		if got != wantLines || gotLong != wantLong || gotErr != bad {
			t.Fatalf("%d output lines (%d too long, %d errors, %d bad), want %d (%d too long)\ninput %q\noutput %s",
				got, gotLong, gotErr, bad, wantLines, wantLong, data, out.String())
		}
	})
}

// TestEvalTools_KnowsEveryTool: eval's registry defines the tools the
// engine registers, with the engine's Mutating flags and memory paths.
func TestEvalTools_KnowsEveryTool(t *testing.T) {
	xws, err := executor.OpenWorkspace(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer xws.Close()
	tools, err := evalTools(xws)
	if err != nil {
		t.Fatal(err)
	}
	mutating := map[string]bool{"write_file": true, "edit_file": true, "delete_file": true, "move_file": true, "make_dir": true,
		"git_commit": true, "memory_append": true, "execute_command": true}
	for _, name := range []string{"read_file", "list_directory", "search_files", "write_file", "edit_file", "delete_file", "move_file",
		"make_dir", "git_status", "git_diff", "git_log", "git_commit", "http_request", "memory_read", "memory_append", "memory_search",
		"execute_command"} {
		def, ok := tools.Def(name)
		if !ok {
			t.Errorf("%s unknown to eval", name)
			continue
		}
		if def.Mutating != mutating[name] {
			t.Errorf("%s: mutating %v", name, def.Mutating)
		}
	}
	if p := tools.Paths(executor.Call{Tool: "memory_append", Args: json.RawMessage(`{"text":"x"}`)}); len(p) != 1 || p[0] != executor.MemoryFile {
		t.Errorf("memory_append paths %v", p)
	}
	if _, err := os.Stat(filepath.Join(xws.Path(), ".opx")); !os.IsNotExist(err) {
		t.Errorf("building the registry wrote in the workspace (%v)", err)
	}
}
