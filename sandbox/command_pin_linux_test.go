package sandbox_test

import (
	"bufio"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/opx-dev/opx/sandbox"
)

// TestExecSandboxed_ProcAfterReclaim drops the kernel's dentry and inode
// caches while a sandboxed command runs and checks that the /proc files
// its policy grants stay readable: the parent pins them
// (PinCommandPaths), as the engine does. Without the pins procfs makes new
// inodes the launcher's rules do not name, and the reads fail with
// EACCES, which is how the command probe failed on a loaded machine.
func TestExecSandboxed_ProcAfterReclaim(t *testing.T) {
	needCommandSandbox(t)
	if os.Geteuid() != 0 {
		t.Skip("dropping the kernel's caches needs root")
	}
	release := sandbox.PinCommandPaths()
	defer release()
	ws := t.TempDir()
	script := `for f in /proc/loadavg /proc/cpuinfo /proc/sys/vm/overcommit_memory; do cat $f >/dev/null || exit 1; done
echo ready; read x
for f in /proc/loadavg /proc/cpuinfo /proc/uptime /proc/sys/vm/overcommit_memory /proc/sys/kernel/ostype; do cat $f >/dev/null || exit 1; done
echo done`
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, cmdLaunchArg, "--workspace", ws, "--", "/bin/sh", "-c", script)
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	out := bufio.NewReader(stdout)
	if line, err := out.ReadString('\n'); line != "ready\n" {
		cmd.Wait()
		t.Fatalf("command: %q %v\n%s", line, err, stderr.String())
	}
	// 2: reclaimable dentries and inodes (not the page cache).
	if err := os.WriteFile("/proc/sys/vm/drop_caches", []byte("2"), 0); err != nil {
		t.Fatal(err)
	}
	stdin.Write([]byte("go\n"))
	line, _ := out.ReadString('\n')
	if err := cmd.Wait(); err != nil || line != "done\n" {
		t.Errorf("after the caches were dropped: %q %v\n%s", line, err, stderr.String())
	}
}
