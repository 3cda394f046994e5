package chronicletest

import (
	"bufio"
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// RunPausingChild runs this test binary as the child test name with env
// added, hands each line it prints to onLine (may be nil) until it prints
// "paused" (Block), then kills it with SIGKILL and waits for it. It fails
// t unless the child paused and died of that SIGKILL.
func RunPausingChild(t testing.TB, name string, env []string, onLine func(string)) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+name+"$")
	cmd.Env = append(os.Environ(), env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	paused := false
	for sc := bufio.NewScanner(stdout); sc.Scan(); {
		if sc.Text() == "paused" {
			paused = true
			break
		}
		if onLine != nil {
			onLine(sc.Text())
		}
	}
	cmd.Process.Kill()
	werr := cmd.Wait()
	if !paused {
		t.Fatalf("the child ended without pausing (%v):\n%s", werr, stderr.String())
	}
	var exit *exec.ExitError
	if !errors.As(werr, &exit) || exit.ProcessState.String() != "signal: killed" {
		t.Fatalf("child: %v, want killed by SIGKILL", werr)
	}
}

// Measured is what the workspace ws holds at rel now, hashed by the test
// itself: the post-state a recovery must record.
func Measured(t testing.TB, ws, rel string) event.PostState {
	t.Helper()
	full := filepath.Join(ws, filepath.FromSlash(rel))
	fi, err := os.Lstat(full)
	if errors.Is(err, fs.ErrNotExist) {
		return event.PostState{Path: rel, Absent: true}
	}
	if err != nil {
		t.Fatal(err)
	}
	mode := uint32(fi.Mode().Perm())
	switch {
	case fi.IsDir():
		return event.PostState{Path: rel, Hash: ledger.Sum([]byte("dir")).String(), Mode: mode}
	case fi.Mode()&fs.ModeSymlink != 0:
		target, _ := os.Readlink(full)
		return event.PostState{Path: rel, Hash: ledger.Sum([]byte("symlink:" + target)).String()}
	}
	b, err := os.ReadFile(full)
	if err != nil {
		t.Fatal(err)
	}
	return event.PostState{Path: rel, Hash: ledger.Sum(b).String(), Mode: mode}
}
