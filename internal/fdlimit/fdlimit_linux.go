package fdlimit

import (
	"fmt"
	"syscall"
)

// Raise sets RLIMIT_NOFILE's soft limit to its hard limit, if it is below,
// and returns the limits before and after.
func Raise() (Result, error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return Result{}, fmt.Errorf("fdlimit: getrlimit: %w", err)
	}
	r := Result{Supported: true, Old: lim.Cur, New: lim.Cur, Max: lim.Max}
	if lim.Cur >= lim.Max {
		return r, nil
	}
	want := syscall.Rlimit{Cur: lim.Max, Max: lim.Max}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &want); err != nil {
		return r, fmt.Errorf("fdlimit: setrlimit %d → %d: %w", lim.Cur, lim.Max, err)
	}
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return r, fmt.Errorf("fdlimit: getrlimit: %w", err)
	}
	r.New, r.Max = lim.Cur, lim.Max
	return r, nil
}
