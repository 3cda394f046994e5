//go:build unix

package collector

import "syscall"

// defaultMaxOpenMirrors is Config.MaxOpenMirrors's default: a quarter
// of the soft limit on open files (read when the collector is made),
// within [DefaultMaxOpenMirrors, MaxDefaultOpenMirrors].
func defaultMaxOpenMirrors() int {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return DefaultMaxOpenMirrors
	}
	return int(max(DefaultMaxOpenMirrors, min(MaxDefaultOpenMirrors, lim.Cur/4)))
}
