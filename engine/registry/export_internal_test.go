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
