package executor

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"path"
	"strings"

	"golang.org/x/sys/unix"
)

// The mutating operations resolve the parent directory beneath the root
// with openat2 (RESOLVE_BENEATH), then act on the last component relative
// to that directory's descriptor, without following a symlink there. So a
// symlink anywhere in the path cannot redirect a write, delete or rename
// out of the workspace, even if it is swapped in concurrently.

// splitRel cleans rel and splits it into its parent and last component.
func splitRel(rel string) (dir, base string, err error) {
	if err := checkRel(rel); err != nil {
		return "", "", err
	}
	clean := path.Clean(rel)
	dir, base = path.Split(clean)
	if base == "" || base == "." || base == ".." || strings.HasPrefix(clean, "../") || clean == ".." {
		return "", "", &PathError{Path: rel, Reason: "not a file path inside the workspace"}
	}
	if dir == "" {
		dir = "."
	}
	return dir, base, nil
}

// dirFD opens a directory beneath the root as an O_PATH descriptor. For a
// change (write), no symlink is followed on the way, even one that stays
// inside the workspace: Shield judges the path as written, so a link
// (d -> .opx) must not carry a change somewhere else.
func (w *Workspace) dirFD(dir string, write bool) (int, error) {
	resolve := w.resolve()
	if write {
		resolve |= unix.RESOLVE_NO_SYMLINKS
	}
	how := unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: resolve}
	for {
		fd, err := unix.Openat2(int(w.root.Fd()), dir, &how)
		if errors.Is(err, unix.EINTR) || errors.Is(err, unix.EAGAIN) {
			continue
		}
		if err != nil {
			return -1, pathError(dir, err)
		}
		return fd, nil
	}
}

// Lstat describes rel without following a final symlink.
func (w *Workspace) Lstat(rel string) (unix.Stat_t, error) {
	var st unix.Stat_t
	if path.Clean(rel) == "." {
		err := unix.Fstat(int(w.root.Fd()), &st)
		return st, err
	}
	fd, base, err := w.parent(rel)
	if err != nil {
		return st, err
	}
	defer unix.Close(fd)
	if err := unix.Fstatat(fd, base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return st, pathError(rel, err)
	}
	return st, nil
}

// Readlink returns a symlink's target.
func (w *Workspace) Readlink(rel string) (string, error) {
	fd, base, err := w.parent(rel)
	if err != nil {
		return "", err
	}
	defer unix.Close(fd)
	buf := make([]byte, 4096)
	n, err := unix.Readlinkat(fd, base, buf)
	if err != nil {
		return "", pathError(rel, err)
	}
	return string(buf[:n]), nil
}

// WriteFile replaces (or creates) rel atomically: a temporary file in the
// same directory, written and fsynced, renamed over the target, and the
// directory fsynced. A symlink at rel is replaced, never followed.
func (w *Workspace) WriteFile(rel string, data []byte, mode uint32) error {
	dir, base, err := splitRel(rel)
	if err != nil {
		return err
	}
	dfd, err := w.dirFD(dir, true)
	if err != nil {
		return err
	}
	defer unix.Close(dfd)
	// O_PATH descriptors cannot be fsynced or used for openat of new
	// files on every kernel; reopen the directory for real.
	real, err := unix.Openat(dfd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return pathError(dir, err)
	}
	defer unix.Close(real)
	var rnd [6]byte
	rand.Read(rnd[:])
	tmp := ".opx-tmp-" + hex.EncodeToString(rnd[:])
	fd, err := unix.Openat(real, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, mode&0o7777)
	if err != nil {
		return pathError(rel, err)
	}
	f := os.NewFile(uintptr(fd), tmp)
	_, werr := f.Write(data)
	if werr == nil {
		werr = unix.Fchmod(fd, mode&0o7777) // umask must not change the recorded mode
	}
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = unix.Renameat(real, tmp, real, base)
	}
	if werr != nil {
		unix.Unlinkat(real, tmp, 0)
		return pathError(rel, werr)
	}
	return unix.Fsync(real)
}

// Remove deletes a file or symlink (or, with dir, an empty directory).
func (w *Workspace) Remove(rel string, dir bool) error {
	fd, base, err := w.writeParent(rel)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	flags := 0
	if dir {
		flags = unix.AT_REMOVEDIR
	}
	if err := unix.Unlinkat(fd, base, flags); err != nil {
		return pathError(rel, err)
	}
	return nil
}

// Rename moves from to to, both inside the workspace, refusing to replace
// an existing target.
func (w *Workspace) Rename(from, to string) error {
	fd1, b1, err := w.writeParent(from)
	if err != nil {
		return err
	}
	defer unix.Close(fd1)
	fd2, b2, err := w.writeParent(to)
	if err != nil {
		return err
	}
	defer unix.Close(fd2)
	if err := unix.Renameat2(fd1, b1, fd2, b2, unix.RENAME_NOREPLACE); err != nil {
		return pathError(from+" -> "+to, err)
	}
	return nil
}

// parent opens rel's parent directory beneath the root, to look at rel,
// and returns it with rel's last component.
func (w *Workspace) parent(rel string) (int, string, error) { return w.openParent(rel, false) }

// writeParent is parent for a change to rel: no symlink is followed.
func (w *Workspace) writeParent(rel string) (int, string, error) { return w.openParent(rel, true) }

func (w *Workspace) openParent(rel string, write bool) (int, string, error) {
	dir, base, err := splitRel(rel)
	if err != nil {
		return -1, "", err
	}
	fd, err := w.dirFD(dir, write)
	return fd, base, err
}

// Mkdir creates a directory and any missing parents, each beneath the
// root.
func (w *Workspace) Mkdir(rel string, mode uint32) error {
	clean := path.Clean(rel)
	if err := checkRel(rel); err != nil {
		return err
	}
	parts := strings.Split(clean, "/")
	for i := range parts {
		sub := strings.Join(parts[:i+1], "/")
		dir, base, err := splitRel(sub)
		if err != nil {
			return err
		}
		fd, err := w.dirFD(dir, true)
		if err != nil {
			return err
		}
		err = unix.Mkdirat(fd, base, mode)
		unix.Close(fd)
		if err != nil && !errors.Is(err, unix.EEXIST) {
			return pathError(sub, err)
		}
	}
	st, err := w.Lstat(clean)
	if err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return &PathError{Path: rel, Reason: "exists and is not a directory"}
	}
	return nil
}
