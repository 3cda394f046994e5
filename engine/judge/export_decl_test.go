package judge

import "time"

// SetRacyWindow sets racyWindow for a test (files it writes are always
// within the real one) and returns the function that restores it.
func SetRacyWindow(d time.Duration) func() {
	was := racyWindow
	racyWindow = d
	return func() { racyWindow = was }
}
