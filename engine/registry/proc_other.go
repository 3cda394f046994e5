//go:build !linux

package registry

import "syscall"

// StartTime reports only whether pid exists, as 1: without /proc there is
// no start time to tell a reused pid from the original.
func StartTime(pid int) (uint64, error) {
	if pid <= 0 || syscall.Kill(pid, 0) == syscall.ESRCH {
		return 0, ErrGone
	}
	return 1, nil
}

func signal(pid int, start uint64, sig syscall.Signal) error {
	if _, err := StartTime(pid); err != nil {
		return err
	}
	return syscall.Kill(pid, sig)
}
