//go:build !linux

package sandbox

import (
	"os/exec"
	"runtime"
)

func probe() Capabilities {
	return Capabilities{Platform: runtime.GOOS, Mechanism: "none", Detail: "no sandbox for " + runtime.GOOS + " yet"}
}

// ApplySelf fails: this platform has no sandbox yet.
func (s *Sandbox) ApplySelf(cfg Config) error { return ErrUnavailable }

// WrapCommand is where a platform whose sandbox is applied by the parent
// (sandbox-exec, job objects) would wrap the child; none is implemented.
func (s *Sandbox) WrapCommand(cmd *exec.Cmd, cfg Config) error { return nil }

// StartUnprivileged starts cmd: there are no capabilities to drop here.
func StartUnprivileged(cmd *exec.Cmd) error { return cmd.Start() }
