package registry

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// StartTime returns when pid started, in clock ticks after boot (field 22
// of /proc/<pid>/stat). With the pid it names one process for the life of
// the system: a pid the kernel reused has another start time. It fails
// with ErrGone for a process that does not exist or has exited (a zombie
// nobody reaps has exited).
func StartTime(pid int) (uint64, error) {
	if pid <= 0 {
		return 0, ErrGone
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
			return 0, ErrGone
		}
		return 0, err
	}
	return parseStat(string(b))
}

// parseStat reads the state and start time from a /proc/<pid>/stat line.
// The command name (field 2) may hold spaces and parentheses, so fields
// are counted from the last ')'.
func parseStat(s string) (uint64, error) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("unreadable /proc stat line %q", s)
	}
	f := strings.Fields(s[i+1:]) // f[0] is field 3, the state
	if len(f) < 20 {
		return 0, fmt.Errorf("short /proc stat line %q", s)
	}
	if f[0] == "Z" || f[0] == "X" {
		return 0, ErrGone
	}
	return strconv.ParseUint(f[19], 10, 64) // field 22
}

// signal sends sig to pid if it is still the process that started at
// start. The pidfd pins the process between the check and the signal, so
// a pid reused in between is never signalled.
func signal(pid int, start uint64, sig syscall.Signal) error {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		if err == unix.ESRCH {
			return ErrGone
		}
		if err != unix.ENOSYS {
			return fmt.Errorf("pidfd_open %d: %w", pid, err)
		}
		// No pidfd (Linux < 5.3): check, then signal.
		if st, err := StartTime(pid); err != nil || st != start {
			return ErrGone
		}
		return syscall.Kill(pid, sig)
	}
	defer unix.Close(fd)
	if st, err := StartTime(pid); err != nil || st != start {
		return ErrGone
	}
	if err := unix.PidfdSendSignal(fd, sig, nil, 0); err != nil {
		if err == unix.ESRCH {
			return ErrGone
		}
		return fmt.Errorf("signal %d: %w", pid, err)
	}
	return nil
}
