package unrecorded_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/opx-dev/opx/agents/unrecorded"
)

func line(i int) unrecorded.Line {
	return unrecorded.Line{Agent: "claude", AgentSessionID: "s-1", Name: "PreToolUse", AgentTool: "Bash",
		Input: `{"command":"ls"}`, Cwd: "/w", At: "2026-12-01T10:00:00.000000001Z", Decision: "allow",
		Reason: "no engine: x; hooks.on_engine_down: allow " + strings.Repeat("i", i%3)}
}

func TestAppend_ReadBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), unrecorded.File)
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := unrecorded.Append(path, line(i)); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	lines, bad, err := unrecorded.Read(path, 1<<20)
	if err != nil || bad != 0 || len(lines) != 20 {
		t.Fatalf("Read: %d lines, %d malformed, %v; want 20, 0, nil", len(lines), bad, err)
	}
}

func TestAppend_CutsInput(t *testing.T) {
	path := filepath.Join(t.TempDir(), unrecorded.File)
	l := line(0)
	l.Input = strings.Repeat("€", unrecorded.MaxInputBytes) // 3 bytes each
	if err := unrecorded.Append(path, l); err != nil {
		t.Fatal(err)
	}
	lines, _, err := unrecorded.Read(path, 1<<20)
	if err != nil || len(lines) != 1 {
		t.Fatal(len(lines), err)
	}
	if n := len(lines[0].Input); n > unrecorded.MaxInputBytes || n < unrecorded.MaxInputBytes-3 || !strings.HasPrefix(l.Input, lines[0].Input) {
		t.Errorf("input of %d bytes, want a prefix of about %d", n, unrecorded.MaxInputBytes)
	}
}

func TestAppend_Full(t *testing.T) {
	path := filepath.Join(t.TempDir(), unrecorded.File)
	if err := os.WriteFile(path, make([]byte, unrecorded.MaxFileBytes-10), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := unrecorded.Append(path, line(0)); !errors.Is(err, unrecorded.ErrFull) {
		t.Fatalf("Append to a full file: %v, want ErrFull", err)
	}
	if fi, _ := os.Stat(path); fi.Size() != unrecorded.MaxFileBytes-10 {
		t.Errorf("the full file grew to %d", fi.Size())
	}
}

func TestAppend_Refusals(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("keep\n"), 0o600)
	link := filepath.Join(dir, "link")
	os.Symlink(target, link)
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{link, fifo, dir} {
		err := unrecorded.Append(p, line(0))
		if err == nil {
			t.Errorf("Append(%s) wrote", p)
		}
		if _, _, err := unrecorded.Read(p, 1<<20); err == nil {
			t.Errorf("Read(%s) read", p)
		}
	}
	if b, _ := os.ReadFile(target); string(b) != "keep\n" {
		t.Errorf("the symlink's target was written: %q", b)
	}
	if err := unrecorded.Append(link, line(0)); !errors.Is(err, unrecorded.ErrNotRegular) {
		t.Errorf("Append through a symlink: %v, want ErrNotRegular", err)
	}
}

func TestRead_Hostile(t *testing.T) {
	good := `{"agent":"codex","name":"PreToolUse","at":"2026-12-01T10:00:00Z","decision":"allow","reason":"r"}` + "\n"
	for _, tc := range []struct {
		name      string
		body      string
		max       int64
		lines     int
		malformed int
		err       error
	}{
		{"empty", "", 100, 0, 0, nil},
		{"torn tail", good + good[:30], 1 << 20, 1, 1, nil},
		{"garbage between", good + "not json\n\n" + good, 1 << 20, 2, 1, nil},
		{"missing fields", good + `{"agent":"codex"}` + "\n", 1 << 20, 1, 1, nil},
		{"a long line", good + `{"agent":"` + strings.Repeat("a", unrecorded.MaxLineBytes) + `"}` + "\n" + good, 1 << 20, 2, 1, nil},
		{"past the bound", good + good + good, int64(2*len(good) + 5), 2, 0, unrecorded.ErrTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), unrecorded.File)
			os.WriteFile(path, []byte(tc.body), 0o600)
			lines, bad, err := unrecorded.Read(path, tc.max)
			if len(lines) != tc.lines || bad != tc.malformed || !errors.Is(err, tc.err) {
				t.Errorf("Read: %d lines, %d malformed, %v; want %d, %d, %v", len(lines), bad, err, tc.lines, tc.malformed, tc.err)
			}
		})
	}
	if _, _, err := unrecorded.Read(filepath.Join(t.TempDir(), "none"), 100); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Read of a missing file: %v", err)
	}
}
