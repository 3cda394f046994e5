package chronicle

import "time"

// SetRacyWindow sets how old a timestamp must be to be trusted, for
// tests that cannot wait a second; it returns the restore function.
func SetRacyWindow(d time.Duration) (restore func()) {
	old := racyWindow
	racyWindow = d
	return func() { racyWindow = old }
}
