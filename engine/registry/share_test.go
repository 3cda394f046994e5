package registry_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/opx-dev/opx/engine/registry"
)

// A directory shared with a held lock is found running, with its own
// entry and token, and holds no descriptor of its own: once the lock is
// released it is not running; Unshare removes its entry. A regular
// engine.lock left there (an older collector's) is replaced by the link.
func TestLock_Share_LookupFollowsTheHolder(t *testing.T) {
	root := t.TempDir()
	l, err := registry.Acquire(registry.Dir(root))
	if err != nil {
		t.Fatal(err)
	}
	sub := registry.Dir(filepath.Join(root, "sources", "a"))
	os.MkdirAll(string(sub), 0o700)
	os.WriteFile(filepath.Join(string(sub), "engine.lock"), nil, 0o600) // an older collector's
	pid := os.Getpid()
	tok, err := l.Share(sub, registry.Entry{Workspace: "w", ManagerPID: pid, EnginePID: pid, Port: 1234, Ledger: "/x/ledger.db"})
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(filepath.Join(string(sub), "engine.lock")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("engine.lock is not a link: %v %v", fi, err)
	}
	e, got, err := registry.Lookup(sub)
	if err != nil || got != tok || e.Port != 1234 || e.Ledger != "/x/ledger.db" {
		t.Fatalf("Lookup = %+v %q %v", e, got, err)
	}
	registry.Unshare(sub)
	if _, _, err := registry.Lookup(sub); !errors.Is(err, registry.ErrStarting) {
		t.Fatalf("Lookup after Unshare = %v, want ErrStarting (held, no entry)", err)
	}
	if _, err := l.Share(sub, registry.Entry{Workspace: "w", ManagerPID: pid, EnginePID: pid, Port: 1234, Ledger: "/x/ledger.db"}); err != nil {
		t.Fatal(err)
	}
	l.Release()
	if _, _, err := registry.Lookup(sub); !errors.Is(err, registry.ErrNotRunning) {
		t.Fatalf("Lookup after Release = %v, want ErrNotRunning", err)
	}
}
