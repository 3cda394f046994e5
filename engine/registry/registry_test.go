package registry_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/opx-dev/opx/engine/registry"
	"golang.org/x/sys/unix"
)

func TestRegistry_Lifecycle(t *testing.T) {
	dir := registry.Dir(filepath.Join(t.TempDir(), "ws"))
	if _, _, err := registry.Lookup(dir); !errors.Is(err, registry.ErrNotRunning) {
		t.Fatalf("Lookup before start = %v, want ErrNotRunning", err)
	}
	l, err := registry.Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := l.NewToken()
	if err != nil || len(tok) != 32 {
		t.Fatalf("token %q, %v", tok, err)
	}
	fi, err := os.Stat(filepath.Join(string(dir), "client.token"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %v, %v; want 0600", fi.Mode(), err)
	}
	if fi, err := os.Stat(string(dir)); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("dir mode %v, %v; want 0700", fi.Mode(), err)
	}
	want := registry.Entry{Workspace: "/w", ManagerPID: os.Getpid(), EnginePID: os.Getpid(), Port: 4242, Ledger: "/l"}
	if err := l.Publish(want); err != nil {
		t.Fatal(err)
	}
	self, err := registry.StartTime(os.Getpid())
	if err != nil || self == 0 {
		t.Fatalf("StartTime(self) = %d, %v", self, err)
	}
	want.ManagerStart, want.EngineStart = self, self
	// A second manager is refused, naming the first.
	if _, err := registry.Acquire(dir); !errors.Is(err, registry.ErrRunning) {
		t.Errorf("second Acquire = %v, want ErrRunning", err)
	}
	got, gotTok, err := registry.Lookup(dir)
	if err != nil || got != want || gotTok != tok {
		t.Errorf("Lookup = %+v %q %v, want %+v %q", got, gotTok, err, want, tok)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := registry.Lookup(dir); !errors.Is(err, registry.ErrNotRunning) {
		t.Errorf("Lookup after release = %v, want ErrNotRunning", err)
	}
	// A stale entry (manager gone without cleanup) is not trusted.
	l2, err := registry.Acquire(dir)
	if err != nil {
		t.Fatalf("Acquire after release: %v", err)
	}
	l2.Publish(want)
	l2.NewToken()
	// Simulate a crash: drop the lock without Release's cleanup.
	registry.CloseWithoutCleanup(t, l2)
	if _, _, err := registry.Lookup(dir); !errors.Is(err, registry.ErrNotRunning) {
		t.Errorf("Lookup of a stale entry = %v, want ErrNotRunning", err)
	}
}

// TestAcquire_WaitsForALookup: Lookup takes the lock shared for an
// instant (`opx status` polling while `opx start` comes up); a manager
// starting in that instant waits for it rather than saying another one
// runs (a CI failure: "opx is already running for this workspace").
func TestAcquire_WaitsForALookup(t *testing.T) {
	dir := registry.Dir(filepath.Join(t.TempDir(), "ws"))
	if err := os.MkdirAll(string(dir), 0o700); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(string(dir), "engine.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_SH); err != nil {
		t.Fatal(err)
	}
	busy := make(chan struct{}, 1)
	defer registry.OnLockBusy(func() {
		select {
		case busy <- struct{}{}:
		default:
		}
	})()
	got := make(chan error, 1)
	go func() {
		l, err := registry.Acquire(dir)
		if err == nil {
			l.Release()
		}
		got <- err
	}()
	select {
	case <-busy: // it waits: the lookup ends
		if err := unix.Flock(int(f.Fd()), unix.LOCK_UN); err != nil {
			t.Fatal(err)
		}
	case err := <-got:
		t.Fatalf("Acquire while a lookup held the lock: %v", err)
	}
	if err := <-got; err != nil {
		t.Fatalf("Acquire after the lookup: %v", err)
	}
}
