//go:build linux && !(amd64 || arm64)

package executor

import "golang.org/x/sys/unix"

// fstatatZ lstats nameZ (a NUL-terminated name, the NUL included)
// relative to dirfd.
func fstatatZ(dirfd int, nameZ []byte, st *unix.Stat_t) error {
	return unix.Fstatat(dirfd, string(nameZ[:len(nameZ)-1]), st, unix.AT_SYMLINK_NOFOLLOW)
}
