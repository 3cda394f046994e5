//go:build !linux

package ui

import "io"

// isTerminal reports false: outside Linux opx does not probe terminals,
// so output stays plain (no colour, no progress bar).
func isTerminal(io.Writer) bool { return false }
