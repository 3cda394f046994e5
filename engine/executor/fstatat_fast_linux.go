//go:build linux && (amd64 || arm64)

package executor

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// fstatatZ lstats nameZ (a NUL-terminated name, the NUL included)
// relative to dirfd without allocating: unix.Fstatat copies every name
// into a new buffer to terminate it, and a workspace snapshot stats every
// path of the workspace.
func fstatatZ(dirfd int, nameZ []byte, st *unix.Stat_t) error {
	_, _, e := unix.Syscall6(unix.SYS_NEWFSTATAT, uintptr(dirfd), uintptr(unsafe.Pointer(&nameZ[0])),
		uintptr(unsafe.Pointer(st)), unix.AT_SYMLINK_NOFOLLOW, 0, 0)
	if e != 0 {
		return e
	}
	return nil
}
