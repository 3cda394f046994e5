package sandbox

import (
	"fmt"
	"os"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// Before Landlock ABI 8 the kernel cannot restrict every thread at once,
// so go-landlock restricts one thread and then has psx make the others
// follow; psx finds them by listing /proc/<pid>/task, from the thread
// that is already restricted. Should that listing be refused, psx kills
// the whole process (a command launcher died so, "failed to read
// /proc/<pid>/task - aborting", in a loaded -race run). taskDirRule grants
// listing that one directory, which names nothing but this process's
// thread ids, and pins it (an open O_PATH descriptor) so that the rule
// names the inode psx will find; the caller closes the pin once
// restricted. From ABI 8 on it grants nothing.
func taskDirRule(abi int) (rules []landlock.Rule, unpin func(), err error) {
	if abi >= 8 {
		return nil, func() {}, nil
	}
	dir := fmt.Sprintf("/proc/%d/task", os.Getpid())
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_CLOEXEC|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", dir, err)
	}
	return []landlock.Rule{landlock.PathAccess(llsys.AccessFSReadDir, dir)}, func() { unix.Close(fd) }, nil
}
