package mcp

import "time"

// SetBackoff sets the Manager's backoff for a test and returns the undo.
func SetBackoff(lo, hi time.Duration) (undo func()) {
	oldLo, oldHi := minBackoff, maxBackoff
	minBackoff, maxBackoff = lo, hi
	return func() { minBackoff, maxBackoff = oldLo, oldHi }
}
