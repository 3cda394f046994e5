//go:build !linux

package executor

import (
	"errors"
	"os"
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
