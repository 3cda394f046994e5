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

// SetRestartBounds sets how long a server must live to be healthy again,
// and how many restarts within what window the Manager takes, for a test,
// and returns the undo.
func SetRestartBounds(reset time.Duration, max int, window time.Duration) (undo func()) {
	oldReset, oldMax, oldWindow := resetAfter, maxRestarts, restartWindow
	resetAfter, maxRestarts, restartWindow = reset, max, window
	return func() { resetAfter, maxRestarts, restartWindow = oldReset, oldMax, oldWindow }
}

// SetListingBudget sets the listing budget's size and period, for a test
// (budgets made afterwards), and returns the undo.
func SetListingBudget(bytes int64, per time.Duration) (undo func()) {
	oldBytes, oldPer := listingBudgetBytes, listingBudgetPer
	listingBudgetBytes, listingBudgetPer = bytes, per
	return func() { listingBudgetBytes, listingBudgetPer = oldBytes, oldPer }
}
