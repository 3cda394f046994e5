//go:build !linux

package supervise

import (
	"os/exec"
	"syscall"
)

// StartTied starts cmd. Only Linux has a parent-death signal; elsewhere
// the child's liveness pipe (or its connection) is what ends it.
func StartTied(cmd *exec.Cmd, _ syscall.Signal) error { return cmd.Start() }

// ArmDeathSignal does nothing: only Linux has a parent-death signal.
func ArmDeathSignal(*exec.Cmd, syscall.Signal) {}
