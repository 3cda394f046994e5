package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/ledgertest"
)

// rewriteTranscript makes the scripted model answer "rewrite" with one
// shell command that rewrites 1,000 files (new content and mode), deletes
// one, and creates a directory with a file.
const rewriteTranscript = `{"model": "e2e", "turns": [{"match": "rewrite", "steps": [
  {"tool_calls": [{"name": "execute_command", "arguments": "{\"command\": \"for f in data/*.txt; do echo rewritten > \\\"$f\\\"; chmod 600 \\\"$f\\\"; done; rm data/f0007.txt; mkdir -p out && echo new > out/new.txt\"}"}]},
  {"text": "done: {{.LastResult}}"}]}]}`

// TestE2E_ShellCommandRollback: a real sandboxed shell command run by the
// real agent rewrites 1,000 files; the workspace snapshot before it and
// the diff after it let `opx rollback` (through the running engine)
// restore every file, checked by hash, mode and absence; the rollback is
// recorded and the ledger verifies strictly.
func TestE2E_ShellCommandRollback(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	orig := map[string]string{}
	for i := range 1000 {
		p := fmt.Sprintf("data/f%04d.txt", i)
		orig[p] = fmt.Sprintf("original content of file %d\n", i)
	}
	os.MkdirAll(filepath.Join(w.ws, "data"), 0o755)
	for p, c := range orig {
		if err := os.WriteFile(filepath.Join(w.ws, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(filepath.Join(w.ws, ".opx"), 0o755)
	for name, content := range map[string]string{
		".opx/config.yaml":     "provider:\n  kind: scripted\n  transcript: .opx/transcript.json\npolicy: .opx/policy.yaml\n",
		".opx/transcript.json": rewriteTranscript,
		".opx/policy.yaml":     "version: 1\ndefault: allow\n",
	} {
		if err := os.WriteFile(filepath.Join(w.ws, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m := w.start()
	out, errOut, code := w.run("send", "rewrite the data")
	if code != 0 || !strings.Contains(out, "[exit status 0]") {
		t.Fatalf("opx send: %d\n%s\n%s", code, out, errOut)
	}
	if b, _ := os.ReadFile(filepath.Join(w.ws, "data/f0500.txt")); string(b) != "rewritten\n" {
		t.Fatalf("the command did not run: f0500 = %q", b)
	}

	out, _, code = w.run("snapshots", "--json")
	var list struct {
		Snapshots []struct {
			ID    uint64   `json:"id"`
			Tool  string   `json:"tool"`
			Kind  string   `json:"kind"`
			Paths []string `json:"paths"`
		} `json:"snapshots"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil || code != 0 || len(list.Snapshots) != 1 {
		t.Fatalf("opx snapshots: %d %v\n%s", code, err, out)
	}
	s := list.Snapshots[0]
	if s.Tool != "execute_command" || s.Kind != "workspace" || len(s.Paths) != 1002 {
		t.Fatalf("snapshot %d: %s %s with %d changed paths, want 1,002 (1,000 files, out/, out/new.txt)", s.ID, s.Tool, s.Kind, len(s.Paths))
	}

	out, errOut, code = w.run("rollback", fmt.Sprint(s.ID))
	if code != 0 || !strings.Contains(out, "999 paths restored, 1 recreated, 2 removed") {
		t.Fatalf("opx rollback: %d\n%s\n%s", code, out, errOut)
	}
	for p, c := range orig {
		full := filepath.Join(w.ws, p)
		b, err := os.ReadFile(full)
		fi, _ := os.Stat(full)
		if err != nil || ledger.Sum(b) != ledger.Sum([]byte(c)) || fi.Mode().Perm() != 0o644 {
			t.Fatalf("%s after rollback: %q %v mode %v", p, b, err, fi.Mode())
		}
	}
	if _, err := os.Stat(filepath.Join(w.ws, "out")); !os.IsNotExist(err) {
		t.Errorf("out/ survived the rollback: %v", err)
	}
	// A second rollback finds nothing left to do; a conflict is refused.
	if out, _, code := w.run("rollback", fmt.Sprint(s.ID)); code != 0 || !strings.Contains(out, "nothing to do") {
		t.Errorf("second rollback: %d\n%s", code, out)
	}
	st, _ := w.status()
	w.stop(m)
	ledgertest.MustVerify(t, st.LedgerPath, event.StrictOptions())
	if n := count(w.types(st.LedgerPath), "chronicle.rollback"); n != 1 {
		t.Errorf("%d chronicle.rollback entries, want 1", n)
	}
}
