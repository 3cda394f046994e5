package supervise

import (
	"os/exec"
	"runtime"
	"syscall"
)

// The kernel sends a child's parent-death signal when the thread that
// forked it exits, not when the process does. The Go runtime ends a thread
// whenever a goroutine that locked it returns without unlocking, so a
// child forked from an arbitrary goroutine could be signalled while its
// parent lives on. Every tied child is therefore forked from one thread
// that is locked for the life of the process and never exits.
var spawnRequests = make(chan spawnRequest)

type spawnRequest struct {
	cmd  *exec.Cmd
	done chan error
}

func init() {
	go func() {
		runtime.LockOSThread() // never unlocked: this thread lives as long as the process
		for r := range spawnRequests {
			r.done <- r.cmd.Start()
		}
	}()
}

// StartTied starts cmd so that the kernel sends it sig when this process
// dies, however it dies (SIGKILL included). Go's fork checks the parent
// after arming the signal, so a parent that died during the fork is seen
// too. Note that a child that changes its user or group ids loses the
// signal (prctl(2)); such a child must arm it again itself.
func StartTied(cmd *exec.Cmd, sig syscall.Signal) error {
	ArmDeathSignal(cmd, sig)
	done := make(chan error, 1)
	spawnRequests <- spawnRequest{cmd: cmd, done: done}
	return <-done
}

// ArmDeathSignal sets cmd's parent-death signal to sig without starting
// it, for a caller that forks from a thread of its own which outlives the
// child (sandbox.StartUnprivileged): the signal is tied to that thread.
func ArmDeathSignal(cmd *exec.Cmd, sig syscall.Signal) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = sig
}
