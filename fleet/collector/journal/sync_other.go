//go:build !linux

package journal

import "os"

// fdatasync is Sync where fdatasync(2) is not there.
func fdatasync(f *os.File) error { return f.Sync() }
