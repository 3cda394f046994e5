package journal

import (
	"os"

	"golang.org/x/sys/unix"
)

// fdatasync makes f's data durable (its size included), not its times.
func fdatasync(f *os.File) error { return unix.Fdatasync(int(f.Fd())) }
