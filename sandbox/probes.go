package sandbox

import (
	"errors"
	"fmt"
	"syscall"
	"time"
)

// CanaryTargets are what the probes aim at. Each must certainly work
// without the sandbox, so that a denial is evidence: the engine plants a
// readable file and a writable directory and listens on a port the agent
// is not allowed to reach.
type CanaryTargets struct {
	ReadFile    string   // a readable file
	WriteDir    string   // a writable directory
	ConnectAddr string   // host:port of a listener the sandbox does not allow
	SpawnPath   string   // a program to start; default /proc/self/exe
	SpawnArgs   []string // arguments that make it exit at once
}

// Probe names.
const (
	ProbeFileRead     = "file_read"
	ProbeFileWrite    = "file_write"
	ProbeNetwork      = "network"
	ProbeProcessSpawn = "process_spawn"
)

// VerifyCanary runs the probes in this process, which must already be
// sandboxed (ApplySelf), and returns the result.
func (s *Sandbox) VerifyCanary(t CanaryTargets) CanaryResult {
	return NewCanaryResult(s.caps.Mechanism, s.caps.Platform, s.runProbes(t), time.Now())
}

// judge turns a probe's error into its result: blocked on one of the
// sandbox's errnos, failed on success (what) or on any other error.
func judge(name, target string, err error, what string, sandboxErrnos ...syscall.Errno) ProbeResult {
	r := ProbeResult{Name: name, Target: target}
	if err == nil {
		r.Status, r.Error = ProbeFailed, "sandbox did not block "+what
		return r
	}
	for _, e := range sandboxErrnos {
		if errors.Is(err, e) {
			r.Status = ProbeBlocked
			return r
		}
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		r.Status, r.Error = ProbeFailed, fmt.Sprintf("unexpected error %s (%v): not the sandbox's denial", errnoName(errno), err)
	} else {
		r.Status, r.Error = ProbeFailed, fmt.Sprintf("unexpected error: %v", err)
	}
	return r
}

func errnoName(e syscall.Errno) string {
	names := map[syscall.Errno]string{syscall.EACCES: "EACCES", syscall.EPERM: "EPERM", syscall.ENOSYS: "ENOSYS",
		syscall.ENOENT: "ENOENT", syscall.ECONNREFUSED: "ECONNREFUSED", syscall.EBADF: "EBADF", syscall.EXDEV: "EXDEV"}
	if n, ok := names[e]; ok {
		return n
	}
	return fmt.Sprintf("errno %d", int(e))
}

// UnavailableCanary is the result for a process that could not be
// sandboxed: every probe skipped with the reason, so the status is
// "unavailable" (not "unsandboxed", which means a sandbox that does not
// hold).
func (s *Sandbox) UnavailableCanary(t CanaryTargets, reason string) CanaryResult {
	probes := []ProbeResult{
		{Name: ProbeFileRead, Status: ProbeSkipped, Target: t.ReadFile, Error: reason},
		{Name: ProbeFileWrite, Status: ProbeSkipped, Target: t.WriteDir, Error: reason},
		{Name: ProbeNetwork, Status: ProbeSkipped, Target: t.ConnectAddr, Error: reason},
		{Name: ProbeProcessSpawn, Status: ProbeSkipped, Target: t.SpawnPath, Error: reason},
	}
	return NewCanaryResult("none", s.caps.Platform, probes, time.Now())
}
