package sandbox_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opx-dev/opx/sandbox"
	"golang.org/x/sys/unix"
)

// capsChild reports, as JSON, the capability sets of each of its threads
// and its securebits, then applies the agent's sandbox and says whether
// that worked.
func capsChild() int {
	report := map[string]any{}
	tasks, _ := filepath.Glob("/proc/self/task/*/status")
	var nonzero []string
	for _, task := range tasks {
		b, _ := os.ReadFile(task)
		for _, line := range strings.Split(string(b), "\n") {
			if name, value, ok := strings.Cut(line, ":\t"); ok && strings.HasPrefix(name, "Cap") && strings.Trim(value, "0") != "" {
				nonzero = append(nonzero, task+" "+line)
			}
		}
	}
	report["nonzero"] = nonzero
	report["securebits"], _ = unix.PrctlRetInt(unix.PR_GET_SECUREBITS, 0, 0, 0, 0)
	report["apply"] = fmt.Sprint(sandbox.New().ApplySelf(sandbox.Config{}))
	json.NewEncoder(os.Stdout).Encode(report)
	return 0
}

// TestStartUnprivileged starts a child the way the engine starts the
// agent: it holds no capability before it does anything (when this test
// runs as root: the bounding set empty and NOROOT locked too), its
// sandbox still applies, and no thread of this process keeps the dropped
// state once the child is gone.
func TestStartUnprivileged(t *testing.T) {
	needSandbox(t)
	before := ownCapabilities(t, "CapEff")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=caps")
	var out strings.Builder
	cmd.Stdout = &out
	if err := sandbox.StartUnprivileged(cmd); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v\n%s", err, out.String())
	}
	var got struct {
		Nonzero    []string
		Securebits int
		Apply      string
	}
	if err := json.Unmarshal([]byte(out.String()), &got); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	root := before&(1<<unix.CAP_SETPCAP) != 0
	for _, line := range got.Nonzero {
		if root || !strings.Contains(line, "CapBnd") {
			t.Errorf("child started with %s", line)
		}
	}
	if root && got.Securebits&0x3 != 0x3 {
		t.Errorf("child's securebits %#x: NOROOT not locked", got.Securebits)
	}
	if got.Apply != "<nil>" {
		t.Errorf("ApplySelf: %s", got.Apply)
	}
	// The thread that forked ends once the child has; the others never
	// lost anything.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		tasks, _ := filepath.Glob("/proc/self/task/*/status")
		changed := ""
		for _, task := range tasks {
			b, err := os.ReadFile(task)
			if err != nil {
				continue // the thread ended meanwhile
			}
			if !strings.Contains(string(b), fmt.Sprintf("CapEff:\t%016x\n", before)) {
				changed = task
			}
		}
		if changed == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a thread of the test kept the dropped state: %s, CapEff was %#x", changed, before)
		}
	}
}
