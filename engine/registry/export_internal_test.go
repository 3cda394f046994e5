package registry

import "testing"

// CloseWithoutCleanup drops the lock as a dying process would, leaving its
// files behind.
func CloseWithoutCleanup(t *testing.T, l *Lock) {
	t.Helper()
	if err := l.f.Close(); err != nil {
		t.Fatal(err)
	}
}

// OnLockBusy sets a hook called when Acquire finds the lock held and
// waits, and returns the undo.
func OnLockBusy(f func()) (undo func()) {
	testHookLockBusy = f
	return func() { testHookLockBusy = nil }
}
