//go:build !linux

package executor

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// Workspace is unavailable off Linux: safe path resolution needs openat2.
type Workspace struct{ path string }

// ErrUnsupported is returned off Linux.
var ErrUnsupported = errors.New("executors need Linux (openat2 with RESOLVE_BENEATH)")

// OpenWorkspace reports ErrUnsupported.
func OpenWorkspace(dir string) (*Workspace, error) { return nil, ErrUnsupported }

// Path returns the workspace path.
func (w *Workspace) Path() string { return w.path }

// Close does nothing.
func (w *Workspace) Close() error { return nil }

// Open reports ErrUnsupported.
func (w *Workspace) Open(rel string, flags int, mode uint32) (*os.File, error) {
	return nil, ErrUnsupported
}

// Lstat is unsupported here.
func (w *Workspace) Lstat(rel string) (unix.Stat_t, error) { return unix.Stat_t{}, ErrUnsupported }

// Readlink is unsupported here.
func (w *Workspace) Readlink(rel string) (string, error) { return "", ErrUnsupported }

// WriteFile is unsupported here.
func (w *Workspace) WriteFile(rel string, data []byte, mode uint32) error { return ErrUnsupported }

// Remove is unsupported here.
func (w *Workspace) Remove(rel string, dir bool) error { return ErrUnsupported }

// Rename is unsupported here.
func (w *Workspace) Rename(from, to string) error { return ErrUnsupported }

// Mkdir is unsupported here.
func (w *Workspace) Mkdir(rel string, mode uint32) error { return ErrUnsupported }

// DirStat is one directory entry with its lstat.
type DirStat struct {
	Name string
	Stat unix.Stat_t
}

// ReadDirStat is unsupported here.
func (w *Workspace) ReadDirStat(rel string) ([]DirStat, error) { return nil, ErrUnsupported }

// Chmod is unsupported here.
func (w *Workspace) Chmod(rel string, mode uint32) error { return ErrUnsupported }

// Symlink is unsupported here.
func (w *Workspace) Symlink(target, rel string) error { return ErrUnsupported }

// FileWrite is one file of a WriteFiles batch.
type FileWrite struct {
	Rel  string
	Data []byte
	Mode uint32
}

// WriteFiles is unsupported here.
func (w *Workspace) WriteFiles(files []FileWrite) (int, error) { return 0, ErrUnsupported }

// Strict returns the workspace itself here.
func (w *Workspace) Strict() *Workspace { return w }

// MaxLinks bounds the symlinks Resolve follows for one path.
const MaxLinks = 40

// Resolve is unsupported here.
func (w *Workspace) Resolve(rel string, followLast bool) (string, error) { return "", ErrUnsupported }

// LinksBeneath is unsupported here.
func (w *Workspace) LinksBeneath(rel string, max int) ([]string, bool, error) {
	return nil, false, ErrUnsupported
}
