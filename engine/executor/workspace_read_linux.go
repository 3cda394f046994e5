package executor

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// openEntry opens name, one entry of the open directory dir, with
// openat2(RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS): a symlink is never
// followed (ELOOP), whether it points to a file or a directory, inside the
// workspace or out. Walks that descend one descriptor at a time, like
// search_files, therefore stay beneath the directory they started in even
// if the tree is changed under them. O_NOFOLLOW and O_CLOEXEC are always
// added.
func openEntry(dir *os.File, name string, flags int) (*os.File, error) {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") {
		return nil, &PathError{Path: name, Reason: "not a directory entry name"}
	}
	how := unix.OpenHow{Flags: uint64(flags | unix.O_NOFOLLOW | unix.O_CLOEXEC), Resolve: resolveFlags | unix.RESOLVE_NO_SYMLINKS}
	for {
		fd, err := unix.Openat2(int(dir.Fd()), name, &how)
		if errors.Is(err, unix.EINTR) || errors.Is(err, unix.EAGAIN) {
			continue
		}
		if err != nil {
			return nil, pathError(name, err)
		}
		return os.NewFile(uintptr(fd), filepath.Join(dir.Name(), name)), nil
	}
}
