package main_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestE2E_AgentHoldsNothing: the agent opx start runs holds no capability
// in any thread, even when opx runs as root (the bounding set too, when
// this test may drop one), and every thread is filtered with
// no_new_privs.
func TestE2E_AgentHoldsNothing(t *testing.T) {
	needSandbox(t)
	w := newWorld(t)
	m := w.start()
	defer w.stop(m)
	pid := agentPid(t, w.bin)
	fields := []string{"CapInh", "CapPrm", "CapEff", "CapAmb"}
	if own, _ := os.ReadFile("/proc/self/status"); strings.Contains(string(own), "CapEff:\t") && capSetpcap(string(own)) {
		fields = append(fields, "CapBnd")
	}
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", pid))
	if len(tasks) < 2 {
		t.Fatalf("agent %d has %d threads", pid, len(tasks))
	}
	for _, task := range tasks {
		b, err := os.ReadFile(task)
		if err != nil {
			continue // the thread ended
		}
		for _, f := range fields {
			if !strings.Contains(string(b), f+":\t0000000000000000\n") {
				t.Errorf("%s: %s is not empty", task, f)
			}
		}
		if !strings.Contains(string(b), "Seccomp:\t2\n") || !strings.Contains(string(b), "NoNewPrivs:\t1\n") {
			t.Errorf("%s lacks Seccomp: 2 or NoNewPrivs: 1", task)
		}
	}
}

// capSetpcap reports whether a /proc status shows CAP_SETPCAP effective.
func capSetpcap(status string) bool {
	_, rest, _ := strings.Cut(status, "CapEff:\t")
	v, err := strconv.ParseUint(rest[:16], 16, 64)
	return err == nil && v&(1<<8) != 0
}

// agentPid finds the running `opx internal-agent` of bin.
func agentPid(t *testing.T, bin string) int {
	t.Helper()
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		args := strings.Split(string(b), "\x00")
		if err != nil || len(args) < 2 || args[0] != bin || args[1] != "internal-agent" {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		return pid
	}
	t.Fatal("no agent process")
	return 0
}
