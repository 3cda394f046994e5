package sandbox

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

func (s *Sandbox) runProbes(t CanaryTargets) []ProbeResult {
	var out []ProbeResult

	f, err := os.Open(t.ReadFile)
	if err == nil {
		f.Close()
	}
	out = append(out, judge(ProbeFileRead, t.ReadFile, err, "read access", syscall.EACCES))

	name := filepath.Join(t.WriteDir, fmt.Sprintf(".opx-canary-probe-%d", os.Getpid()))
	f, err = os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		f.Close()
		os.Remove(name)
	}
	out = append(out, judge(ProbeFileWrite, t.WriteDir, err, "write access", syscall.EACCES))

	if !s.caps.Network {
		out = append(out, ProbeResult{Name: ProbeNetwork, Status: ProbeSkipped, Target: t.ConnectAddr,
			Error: fmt.Sprintf("requires Landlock ABI 4+ (kernel 6.7+); this kernel has ABI %d", s.caps.LandlockABI)})
	} else {
		c, err := net.DialTimeout("tcp", t.ConnectAddr, 5*time.Second)
		if err == nil {
			c.Close()
		}
		out = append(out, judge(ProbeNetwork, t.ConnectAddr, err, "outbound connection", syscall.EACCES))
	}

	path := t.SpawnPath
	if path == "" {
		path = "/proc/self/exe"
	}
	cmd := exec.Command(path, t.SpawnArgs...)
	cmd.Env = []string{}
	// Pipes, not /dev/null: opening /dev/null is itself denied by
	// Landlock, and the probe is about creating a process.
	cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(""), io.Discard, io.Discard
	err = cmd.Run()
	if _, exited := err.(*exec.ExitError); exited {
		err = nil // it ran: the sandbox did not stop it
	}
	// seccomp refuses clone without CLONE_THREAD (EPERM) and clone3
	// (ENOSYS); were it to get that far, execve is EPERM too.
	out = append(out, judge(ProbeProcessSpawn, path, err, "process creation", syscall.EPERM, syscall.ENOSYS))
	return out
}
