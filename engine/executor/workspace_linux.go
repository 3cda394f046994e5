package executor

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Workspace is the directory tools work in, held open so that every
// lookup starts from the same inode even if the path is renamed.
type Workspace struct {
	root *os.File // O_PATH|O_DIRECTORY
	path string
	// strict views (Strict) follow no symlink on any lookup.
	strict bool
}

// OpenWorkspace opens dir as a workspace root.
func OpenWorkspace(dir string) (*Workspace, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", dir, err)
	}
	fd, err := unix.Open(abs, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", abs, err)
	}
	return &Workspace{root: os.NewFile(uintptr(fd), abs), path: abs}, nil
}

// Path returns the workspace's absolute path.
func (w *Workspace) Path() string { return w.path }

// Close releases the root descriptor; closing a Strict view does nothing.
func (w *Workspace) Close() error {
	if w.strict {
		return nil
	}
	return w.root.Close()
}

// resolveFlags are used for every lookup: stay beneath the root, and no
// /proc magic links.
const resolveFlags = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS

// Strict returns a view of the workspace that follows no symlink on any
// lookup, reads included: what Chronicle records and restores is the
// workspace's real tree, never a path through a link. The view shares the
// root descriptor: close the Workspace, not the view.
func (w *Workspace) Strict() *Workspace {
	v := *w
	v.strict = true
	return &v
}

func (w *Workspace) resolve() uint64 {
	if w.strict {
		return resolveFlags | unix.RESOLVE_NO_SYMLINKS
	}
	return resolveFlags
}

// Open opens rel beneath the workspace. flags are open(2) flags; O_CLOEXEC
// is always added.
func (w *Workspace) Open(rel string, flags int, mode uint32) (*os.File, error) {
	if err := checkRel(rel); err != nil {
		return nil, err
	}
	how := unix.OpenHow{Flags: uint64(flags | unix.O_CLOEXEC), Mode: uint64(mode), Resolve: w.resolve()}
	for {
		fd, err := unix.Openat2(int(w.root.Fd()), rel, &how)
		if errors.Is(err, unix.EINTR) || errors.Is(err, unix.EAGAIN) {
			continue // EAGAIN: a concurrent rename raced the lookup; retry
		}
		if err != nil {
			return nil, pathError(rel, err)
		}
		return os.NewFile(uintptr(fd), filepath.Join(w.path, rel)), nil
	}
}

// checkRel refuses what is never a workspace path before asking the
// kernel, for clearer messages; the kernel check is the one that counts.
func checkRel(rel string) error {
	switch {
	case rel == "":
		return &PathError{Path: rel, Reason: "empty path"}
	case filepath.IsAbs(rel):
		return &PathError{Path: rel, Reason: "absolute paths are not allowed; use a path relative to the workspace"}
	case len(rel) > 4096:
		return &PathError{Path: rel[:64] + "...", Reason: "path too long"}
	}
	for i := 0; i < len(rel); i++ {
		if rel[i] == 0 {
			return &PathError{Path: rel, Reason: "path contains a NUL byte"}
		}
	}
	return nil
}

// PathError is a tool path that cannot be used.
type PathError struct {
	Path   string
	Reason string
	Errno  unix.Errno
}

func (e *PathError) Error() string { return fmt.Sprintf("%s: %s", e.Path, e.Reason) }

// Unwrap gives the errno, so errors.Is(err, fs.ErrNotExist) works.
func (e *PathError) Unwrap() error {
	if e.Errno == 0 {
		return nil
	}
	return e.Errno
}

func pathError(rel string, err error) error {
	var errno unix.Errno
	if !errors.As(err, &errno) {
		return &PathError{Path: rel, Reason: err.Error()}
	}
	reason := errno.Error()
	switch errno {
	case unix.EXDEV:
		reason = "resolves outside the workspace (absolute symlink, .. or a link pointing out)"
	case unix.ELOOP:
		reason = "a symlink on the way that was not judged (tools go only through real directories, or through the links Shield resolved when it judged the call), a symlink loop, or a /proc magic link"
	case unix.ENOENT:
		reason = "no such file or directory"
	case unix.ENOTDIR:
		reason = "a path component is not a directory"
	case unix.EISDIR:
		reason = "is a directory"
	case unix.EACCES, unix.EPERM:
		reason = "permission denied"
	case unix.ENOSYS:
		reason = "the kernel lacks openat2 (Linux 5.6+ is required)"
	}
	return &PathError{Path: rel, Reason: reason, Errno: errno}
}
