package sandbox

import "golang.org/x/sys/unix"

// seccompArch says this architecture has a filter.
const seccompArch = true

const (
	auditArch     = unix.AUDIT_ARCH_AARCH64
	x32Bit        = 0 // no compat ABI to alias numbers
	cloneFlagsArg = 0
)

// agentAllowed are the syscalls the agent may make with any arguments:
// the Go runtime's (memory, threads, signals, time, the network poller),
// descriptors it already holds, and TCP (socket and connect are checked
// by the filter and by Landlock). clone, socket, openat, kill, tgkill,
// sendto and sendmsg are allowed with some arguments only (see filter).
var agentAllowed = []int{
	// Memory.
	unix.SYS_MMAP, unix.SYS_MUNMAP, unix.SYS_MPROTECT, unix.SYS_MADVISE, unix.SYS_MREMAP, unix.SYS_BRK,
	// Threads and their synchronisation.
	unix.SYS_FUTEX, unix.SYS_GETTID, unix.SYS_SCHED_YIELD, unix.SYS_SCHED_GETAFFINITY,
	unix.SYS_SET_ROBUST_LIST, unix.SYS_RSEQ, unix.SYS_EXIT, unix.SYS_EXIT_GROUP, unix.SYS_GETPID,
	// Signals.
	unix.SYS_RT_SIGACTION, unix.SYS_RT_SIGPROCMASK, unix.SYS_RT_SIGRETURN, unix.SYS_SIGALTSTACK,
	unix.SYS_RESTART_SYSCALL,
	// Time.
	unix.SYS_CLOCK_GETTIME, unix.SYS_CLOCK_GETRES, unix.SYS_CLOCK_NANOSLEEP, unix.SYS_NANOSLEEP, unix.SYS_GETTIMEOFDAY,
	// Descriptors it holds, and the network poller.
	unix.SYS_READ, unix.SYS_WRITE, unix.SYS_READV, unix.SYS_WRITEV, unix.SYS_PREAD64, unix.SYS_PWRITE64,
	unix.SYS_CLOSE, unix.SYS_FSTAT, unix.SYS_LSEEK, unix.SYS_FCNTL,
	unix.SYS_EPOLL_CREATE1, unix.SYS_EPOLL_CTL, unix.SYS_EPOLL_PWAIT, unix.SYS_EVENTFD2, unix.SYS_PIPE2,
	// TCP to the engine.
	unix.SYS_CONNECT, unix.SYS_GETSOCKOPT, unix.SYS_SETSOCKOPT, unix.SYS_GETSOCKNAME, unix.SYS_GETPEERNAME,
	unix.SYS_RECVFROM, unix.SYS_RECVMSG, unix.SYS_SHUTDOWN,
	// Facts about itself.
	unix.SYS_GETRANDOM, unix.SYS_UNAME, unix.SYS_CAPGET,
	unix.SYS_GETUID, unix.SYS_GETEUID, unix.SYS_GETGID, unix.SYS_GETEGID,
}

// agentRefused fail with EPERM: what an escape would try first. arm64
// has no fork, vfork, open, creat, stat, lstat, access, readlink, link,
// rename, unlink, mkdir, rmdir, symlink, mknod, chmod, chown, lchown,
// iopl or ioperm.
var agentRefused = []int{
	// Other programs and processes.
	unix.SYS_EXECVE, unix.SYS_EXECVEAT,
	unix.SYS_PTRACE, unix.SYS_PROCESS_VM_READV, unix.SYS_PROCESS_VM_WRITEV, unix.SYS_PIDFD_GETFD, unix.SYS_PROCESS_MADVISE,
	// Files: the agent changes none (Landlock refuses too), and stat,
	// access and readlink would see any path, which Landlock does not
	// check; nor does it check handles.
	unix.SYS_LINKAT, unix.SYS_RENAMEAT, unix.SYS_RENAMEAT2, unix.SYS_UNLINKAT, unix.SYS_MKDIRAT, unix.SYS_SYMLINKAT,
	unix.SYS_MKNODAT, unix.SYS_FCHMODAT, unix.SYS_FCHOWNAT, unix.SYS_TRUNCATE, unix.SYS_UTIMENSAT, unix.SYS_CHDIR, unix.SYS_FCHDIR,
	unix.SYS_NEWFSTATAT, unix.SYS_STATX, unix.SYS_FACCESSAT, unix.SYS_FACCESSAT2,
	unix.SYS_READLINKAT, unix.SYS_NAME_TO_HANDLE_AT, unix.SYS_OPEN_BY_HANDLE_AT, unix.SYS_MEMFD_CREATE,
	// Mounts, roots and namespaces.
	unix.SYS_MOUNT, unix.SYS_UMOUNT2, unix.SYS_FSOPEN, unix.SYS_FSMOUNT, unix.SYS_FSCONFIG, unix.SYS_FSPICK,
	unix.SYS_MOVE_MOUNT, unix.SYS_OPEN_TREE, unix.SYS_MOUNT_SETATTR, unix.SYS_PIVOT_ROOT, unix.SYS_CHROOT,
	unix.SYS_UNSHARE, unix.SYS_SETNS,
	// Kernel attack surface and the machine's state.
	unix.SYS_BPF, unix.SYS_PERF_EVENT_OPEN, unix.SYS_USERFAULTFD, unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER,
	unix.SYS_IO_URING_REGISTER, unix.SYS_KEYCTL, unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY,
	unix.SYS_INIT_MODULE, unix.SYS_FINIT_MODULE, unix.SYS_DELETE_MODULE, unix.SYS_KEXEC_LOAD, unix.SYS_KEXEC_FILE_LOAD,
	unix.SYS_REBOOT, unix.SYS_SYSLOG, unix.SYS_ACCT, unix.SYS_SWAPON, unix.SYS_SWAPOFF, unix.SYS_QUOTACTL,
	// Identity and privileges.
	unix.SYS_SETUID, unix.SYS_SETGID, unix.SYS_SETREUID, unix.SYS_SETREGID, unix.SYS_SETRESUID, unix.SYS_SETRESGID,
	unix.SYS_SETGROUPS, unix.SYS_SETFSUID, unix.SYS_SETFSGID, unix.SYS_CAPSET, unix.SYS_PRCTL,
	// Sockets but TCP.
	unix.SYS_SOCKETPAIR, unix.SYS_BIND, unix.SYS_LISTEN, unix.SYS_ACCEPT, unix.SYS_ACCEPT4,
}

// commandModeArgs maps the syscalls that set a file's mode to the index
// of their mode argument (see commandFilter).
var commandModeArgs = map[int]int{
	unix.SYS_FCHMOD: 1, unix.SYS_FCHMODAT: 2, unix.SYS_FCHMODAT2: 2,
	unix.SYS_OPENAT: 3, unix.SYS_MKDIRAT: 2, unix.SYS_MKNODAT: 2,
}
