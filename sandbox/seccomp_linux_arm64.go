package sandbox

import "golang.org/x/sys/unix"

// seccompArch says this architecture has a filter.
const seccompArch = true

const (
	auditArch     = unix.AUDIT_ARCH_AARCH64
	x32Bit        = 0 // no compat ABI to alias numbers
	cloneFlagsArg = 0
)

// deniedSyscalls fail with EPERM. arm64 has no fork or vfork syscalls.
var deniedSyscalls = []int{
	unix.SYS_EXECVE, unix.SYS_EXECVEAT,
	unix.SYS_PTRACE, unix.SYS_PROCESS_VM_READV, unix.SYS_PROCESS_VM_WRITEV,
	unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER,
	unix.SYS_MEMFD_CREATE, unix.SYS_MOUNT, unix.SYS_UMOUNT2,
	unix.SYS_FSOPEN, unix.SYS_FSMOUNT, unix.SYS_FSCONFIG, unix.SYS_MOVE_MOUNT, unix.SYS_OPEN_TREE,
	unix.SYS_UNSHARE, unix.SYS_SETNS, unix.SYS_BPF, unix.SYS_PERF_EVENT_OPEN,
	unix.SYS_KEYCTL, unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY, unix.SYS_SOCKETPAIR,
}
