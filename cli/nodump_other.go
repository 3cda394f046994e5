//go:build !linux

package cli

import (
	"fmt"
	"syscall"
)

// keepMemoryOffDisk sets RLIMIT_CORE to 0, so no core of this process
// (nor of those it starts) holds its memory: see nodump_linux.go.
func keepMemoryOffDisk() error {
	if err := syscall.Setrlimit(syscall.RLIMIT_CORE, &syscall.Rlimit{}); err != nil {
		return fmt.Errorf("set RLIMIT_CORE to 0: %w", err)
	}
	return nil
}
