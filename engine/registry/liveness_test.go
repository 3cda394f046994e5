package registry_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opx-dev/opx/engine/registry"
)

// sleeper starts a child that runs until killed; the test reaps it.
func sleeper(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "600")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

func start(t *testing.T, pid int) uint64 {
	t.Helper()
	st, err := registry.StartTime(pid)
	if err != nil {
		t.Fatalf("StartTime(%d): %v", pid, err)
	}
	return st
}

// crashedManager leaves what a SIGKILLed manager leaves: an entry naming
// engine, the token, and a lock nobody holds.
func crashedManager(t *testing.T, engine registry.Entry) registry.Dir {
	t.Helper()
	dir := registry.Dir(filepath.Join(t.TempDir(), "ws"))
	l, err := registry.Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	l.NewToken()
	if err := l.Publish(engine); err != nil {
		t.Fatal(err)
	}
	registry.CloseWithoutCleanup(t, l)
	return dir
}

func TestStartTime_Gone(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if _, err := registry.StartTime(cmd.Process.Pid); !errors.Is(err, registry.ErrGone) {
		t.Errorf("StartTime of a reaped child = %v, want ErrGone", err)
	}
	// A zombie (exited, not reaped) is gone too.
	z := exec.Command("true")
	if err := z.Start(); err != nil {
		t.Fatal(err)
	}
	defer z.Wait()
	stat := fmt.Sprintf("/proc/%d/stat", z.Process.Pid)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		if b, _ := os.ReadFile(stat); strings.Contains(string(b), ") Z ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the child never exited")
		}
	}
	if _, err := registry.StartTime(z.Process.Pid); !errors.Is(err, registry.ErrGone) {
		t.Errorf("StartTime of a zombie = %v, want ErrGone", err)
	}
}

// TestLookup_OrphanedEngine: a manager died, its engine runs on. Lookup
// says not running (and why), Orphan finds the engine, Stop ends it, and
// the next Lookup removes the stale files.
func TestLookup_OrphanedEngine(t *testing.T) {
	eng := sleeper(t)
	e := registry.Entry{Workspace: "/w", ManagerPID: 1 << 22, EnginePID: eng.Process.Pid, Port: 4242, Ledger: "/l"}
	dir := crashedManager(t, e)
	if _, _, err := registry.Lookup(dir); !errors.Is(err, registry.ErrNotRunning) || !strings.Contains(err.Error(), "still runs without its manager") {
		t.Errorf("Lookup with an orphaned engine = %v", err)
	}
	got, err := registry.Orphan(dir)
	if err != nil || got.EnginePID != eng.Process.Pid || got.EngineStart != start(t, eng.Process.Pid) {
		t.Fatalf("Orphan = %+v, %v", got, err)
	}
	if err := registry.Stop(got, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if got.EngineAlive() {
		t.Error("engine alive after Stop")
	}
	if _, _, err := registry.Lookup(dir); !errors.Is(err, registry.ErrNotRunning) || strings.Contains(err.Error(), "still runs") {
		t.Errorf("Lookup after the orphan stopped = %v", err)
	}
	for _, f := range []string{"engine.json", "client.token"} {
		if _, err := os.Stat(filepath.Join(string(dir), f)); !os.IsNotExist(err) {
			t.Errorf("%s left behind: %v", f, err)
		}
	}
	// A new manager finds nothing stale.
	l, err := registry.Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if e, ok := l.Stale(); ok {
		t.Errorf("Stale = %+v after the orphan was stopped", e)
	}
}

// TestStop_ReusedPid: an entry whose pid now names another process (its
// start time differs) is neither reported alive nor signalled.
func TestStop_ReusedPid(t *testing.T) {
	other := sleeper(t)
	e := registry.Entry{EnginePID: other.Process.Pid, EngineStart: start(t, other.Process.Pid) + 1, Port: 1}
	if e.EngineAlive() {
		t.Error("a reused pid is taken for the registered engine")
	}
	if err := registry.Stop(e, time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := registry.StartTime(other.Process.Pid); err != nil {
		t.Errorf("Stop signalled the process that reused the pid: %v", err)
	}
	dir := crashedManager(t, e)
	if _, err := registry.Orphan(dir); !errors.Is(err, registry.ErrNotRunning) {
		t.Errorf("Orphan with a reused pid = %v, want ErrNotRunning", err)
	}
}

// TestLookup_ManagerUpEngineGone: a live manager whose engine exited (it
// is restarting) is starting, not running on a dead port.
func TestLookup_ManagerUpEngineGone(t *testing.T) {
	dir := registry.Dir(filepath.Join(t.TempDir(), "ws"))
	l, err := registry.Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	l.NewToken()
	eng := sleeper(t)
	l.Publish(registry.Entry{ManagerPID: os.Getpid(), EnginePID: eng.Process.Pid, Port: 4242})
	if _, _, err := registry.Lookup(dir); err != nil {
		t.Fatalf("Lookup with the engine up: %v", err)
	}
	eng.Process.Kill()
	eng.Wait()
	if _, _, err := registry.Lookup(dir); !errors.Is(err, registry.ErrStarting) {
		t.Errorf("Lookup with the engine gone = %v, want ErrStarting", err)
	}
}

// TestOrphan_LegacyEntry: an entry written before entries carried start
// times (an older manager, SIGKILLed) still leads to its engine, which its
// command line identifies (internal-engine for this workspace), so opx
// stop and opx start can stop it; a process at that pid running anything
// else is not taken for it.
func TestOrphan_LegacyEntry(t *testing.T) {
	ws := t.TempDir()
	engine := exec.Command("sh", "-c", "read x", "internal-engine", "--workspace", ws)
	stdin, err := engine.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := engine.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); engine.Process.Kill(); engine.Wait() })
	other := sleeper(t)
	for _, tt := range []struct {
		name string
		pid  int
		want bool
	}{{"its engine", engine.Process.Pid, true}, {"another program at the pid", other.Process.Pid, false}} {
		t.Run(tt.name, func(t *testing.T) {
			dir := crashedManager(t, registry.Entry{Workspace: ws, ManagerPID: 1 << 22, EnginePID: tt.pid, Port: 4242, Ledger: "/l"})
			legacy := fmt.Sprintf(`{"workspace":%q,"manager_pid":%d,"engine_pid":%d,"port":4242,"ledger":"/l"}`, ws, 1<<22, tt.pid)
			if err := os.WriteFile(filepath.Join(string(dir), "engine.json"), []byte(legacy), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := registry.Orphan(dir)
			if !tt.want {
				if err == nil {
					t.Fatalf("Orphan = %+v: a process that is not the engine taken for it", got)
				}
				return
			}
			if err != nil || got.EnginePID != tt.pid || got.EngineStart != start(t, tt.pid) {
				t.Fatalf("Orphan = %+v, %v", got, err)
			}
			if err := registry.Stop(got, 5*time.Second); err != nil {
				t.Fatal(err)
			}
			if got.EngineAlive() {
				t.Error("the legacy engine is alive after Stop")
			}
		})
	}
}
