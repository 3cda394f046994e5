package mcp

import "time"

// SetBackoff sets the Manager's backoff for a test and returns the undo.
func SetBackoff(lo, hi time.Duration) (undo func()) {
	oldLo, oldHi := minBackoff, maxBackoff
	minBackoff, maxBackoff = lo, hi
	return func() { minBackoff, maxBackoff = oldLo, oldHi }
}

// SetProbeTimeout sets the wait for the ping after a timeout, for a test,
// and returns the undo.
func SetProbeTimeout(d time.Duration) (undo func()) {
	old := probeTimeout
	probeTimeout = d
	return func() { probeTimeout = old }
}
