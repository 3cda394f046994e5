//go:build !linux

package executor

import "os"

// openEntry reports ErrUnsupported off Linux (see Workspace).
func openEntry(dir *os.File, name string, flags int) (*os.File, error) {
	return nil, ErrUnsupported
}
