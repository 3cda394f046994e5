package sandbox

import (
	"fmt"
	"os/exec"
	"runtime"

	"golang.org/x/sys/unix"
)

// StartUnprivileged starts cmd so that it holds no capability from its
// first instruction, even when this process is root: it forks from a
// thread of its own that first drops every capability of that thread
// alone (bounding set, ambient set, effective, permitted, inheritable) and
// locks the securebits, all of which the child inherits; with NOROOT and
// an empty bounding set, exec as uid 0 grants nothing. The agent's
// ApplySelf then finds nothing to drop, and pays no broadcast to its
// threads. The thread is kept until the child exits, because a
// parent-death signal (SysProcAttr.Pdeathsig) is tied to the thread that
// forked; then it ends with its goroutine, and no other thread of this
// process ever held the dropped state.
func StartUnprivileged(cmd *exec.Cmd) error {
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if unix.Gettid() != unix.Getpid() {
			startLocked(cmd, started) // never unlocked: the thread ends with this goroutine
			return
		}
		// The main thread, which the runtime parks for good instead of
		// ending it: while this goroutine holds it, another locks a
		// thread of its own, which cannot be this one.
		locked := make(chan struct{})
		go func() {
			runtime.LockOSThread() // never unlocked
			close(locked)
			startLocked(cmd, started)
		}()
		<-locked
		runtime.UnlockOSThread()
	}()
	return <-started
}

// startLocked drops the capabilities of the calling thread, which must be
// locked to its goroutine and never unlocked, starts cmd from it, and
// holds the thread until cmd's process has exited.
func startLocked(cmd *exec.Cmd, started chan<- error) {
	if err := dropThread(); err != nil {
		started <- fmt.Errorf("drop privileges: %w", err)
		return
	}
	if err := cmd.Start(); err != nil {
		started <- err
		return
	}
	started <- nil
	waitGone(cmd.Process.Pid)
}

// dropThread drops every capability of the calling thread only. Without
// CAP_SETPCAP the bounding set and securebits stay as they are (there is
// no capability to lose then).
func dropThread() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capget: %w", err)
	}
	if data[0].Permitted&(1<<capSetpcap) != 0 {
		data[0].Effective |= 1 << capSetpcap
		if err := unix.Capset(&hdr, &data[0]); err != nil {
			return fmt.Errorf("capset: %w", err)
		}
		if bits, err := unix.PrctlRetInt(unix.PR_GET_SECUREBITS, 0, 0, 0, 0); err == nil && bits&^secbitKeepCaps|secureBits != bits {
			if err := unix.Prctl(unix.PR_SET_SECUREBITS, uintptr(bits&^secbitKeepCaps|secureBits), 0, 0, 0); err != nil && err != unix.EPERM {
				return fmt.Errorf("securebits: %w", err)
			}
		}
		last, err := lastCap()
		if err != nil {
			return err
		}
		for c := 0; c <= last; c++ {
			if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil {
				return fmt.Errorf("drop capability %d from the bounding set: %w", c, err)
			}
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && err != unix.EINVAL {
		return fmt.Errorf("clear the ambient set: %w", err)
	}
	hdr = unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	data = [2]unix.CapUserData{}
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	return nil
}

// waitGone blocks until process pid has exited, without reaping it (its
// exec.Cmd's Wait does that).
func waitGone(pid int) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		// No pidfd (Linux < 5.3): waitid without reaping. The pid cannot
		// be reused before the owner of cmd reaps it, and then waitid
		// returns ECHILD or a new child's exit; either way only a thread
		// is kept a little longer or shorter.
		var info unix.Siginfo
		for unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil) == unix.EINTR {
		}
		return
	}
	defer unix.Close(fd)
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		if _, err := unix.Poll(fds, -1); err != unix.EINTR {
			return
		}
	}
}
