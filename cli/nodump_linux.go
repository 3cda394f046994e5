package cli

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// keepMemoryOffDisk makes this process's memory stay out of core dumps:
// RLIMIT_CORE 0 (inherited by every process it starts, so their cores
// are not written either, and honoured by systemd-coredump) and the
// process non-dumpable (PR_SET_DUMPABLE 0: the kernel writes no core of
// it whatever core_pattern says, and processes of the same user can no
// longer ptrace it or read its memory through /proc). The engine holds
// the off-the-record keys and conversations only in memory
// (docs/otr.md); a crash must not write them to disk. An execve resets
// dumpable, so the processes it starts are unaffected but for the limit.
func keepMemoryOffDisk() error {
	if err := unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{}); err != nil {
		return fmt.Errorf("set RLIMIT_CORE to 0: %w", err)
	}
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("make the process non-dumpable: %w", err)
	}
	return nil
}
