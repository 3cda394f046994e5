package ui

import (
	"io"

	"golang.org/x/sys/unix"
)

// isTerminal reports whether w is a file descriptor open on a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(interface{ Fd() uintptr })
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
