package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMakeCanaryDir_SweepsDeadEngines: the canary directory of an engine
// that is gone is removed at the next start; a live engine's stays, and so
// does anything that is not a canary directory.
func TestMakeCanaryDir_SweepsDeadEngines(t *testing.T) {
	run := filepath.Join(t.TempDir(), "run")
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	mk := func(name string) string {
		p := filepath.Join(run, name)
		if err := os.MkdirAll(p, 0o700); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(p, "canary.txt"), []byte("x"), 0o644)
		return p
	}
	stale := mk(fmt.Sprintf("%s%d-123", canaryPrefix, dead.Process.Pid))
	live := mk(fmt.Sprintf("%s%d-456", canaryPrefix, os.Getppid()))
	other := mk("opx-canary-notapid")
	dir, err := makeCanaryDir(run, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the dead engine's canary dir is still there: %v", err)
	}
	for _, p := range []string{live, other, dir} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	if want := fmt.Sprintf("%s%d-", canaryPrefix, os.Getpid()); !strings.HasPrefix(filepath.Base(dir), want) || filepath.Dir(dir) != run {
		t.Errorf("canary dir %s, want %s/%s*", dir, run, want)
	}
}
