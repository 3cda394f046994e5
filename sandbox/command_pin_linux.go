package sandbox

import "golang.org/x/sys/unix"

// A Landlock rule holds to an inode, and procfs makes a new inode each
// time it looks up a file whose dentry the kernel has reclaimed: under
// memory pressure a command lost the /proc files its policy grants
// (EACCES on /proc/loadavg after the dentry cache was dropped). The
// process that starts commands keeps those dentries, and so the inodes
// the rules name, alive while a command runs, by holding them open.

// PinCommandPaths opens (O_PATH) the procfs files a command policy
// grants, so that the rules the launcher makes for them
// keep naming the inodes a command will find. The caller holds the pins
// from before it starts the launcher until the command has ended, then
// calls release. Paths that are missing are skipped; pinning is best
// effort and never fails a command.
func PinCommandPaths() (release func()) {
	var fds []int
	for _, p := range commandProcFiles {
		if fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0); err == nil {
			fds = append(fds, fd)
		}
	}
	return func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}
}
