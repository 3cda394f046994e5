package manager_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/opx-dev/opx/engine/manager"
	"github.com/opx-dev/opx/engine/registry"
	"github.com/opx-dev/opx/engine/supervise"
)

// The test binary doubles as the engine: with OPX_MANAGER_CHILD set it
// plays one instead of running the tests.
func TestMain(m *testing.M) {
	switch os.Getenv("OPX_MANAGER_CHILD") {
	case "":
		os.Exit(m.Run())
	case "serve": // completes the protocol, then runs until killed
		fmt.Print("PORT:4242\nWEB_DISABLED\n")
		blockForever()
	case "silent": // never completes the protocol
		blockForever()
	case "stubborn": // completes the protocol, ignores SIGTERM
		signal.Ignore(syscall.SIGTERM)
		fmt.Print("PORT:4242\nWEB_DISABLED\n")
		blockForever()
	}
	os.Exit(99)
}

// blockForever blocks until the process is killed. A bare select {}
// would not: with no other goroutine, the runtime reports a deadlock and
// exits with code 2 (without -race, whose runtime keeps a goroutine).
func blockForever() {
	for {
		time.Sleep(time.Hour)
	}
}

// logBuf collects the manager's log lines.
type logBuf struct {
	mu    sync.Mutex
	lines []string
}

func (l *logBuf) logf(format string, args ...any) {
	l.mu.Lock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
	l.mu.Unlock()
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// run runs a manager whose engines play mode, giving up at the first
// crash; ready receives each engine that completed the protocol.
func run(t *testing.T, ctx context.Context, mode string, startTimeout time.Duration) (registry.Dir, *logBuf, <-chan registry.Entry, <-chan error) {
	t.Helper()
	dir := registry.Dir(t.TempDir())
	logs := &logBuf{}
	ready := make(chan registry.Entry, 4)
	done := make(chan error, 1)
	go func() {
		done <- manager.Run(ctx, manager.Options{
			Workspace: "/ws", StateDir: dir, Ledger: "/ws/ledger.db",
			Engine: func(manager.EngineSpec) *exec.Cmd {
				cmd := exec.Command(os.Args[0], "-test.run=^$")
				cmd.Env = append(os.Environ(), "OPX_MANAGER_CHILD="+mode)
				return cmd
			},
			Policy:       supervise.Policy{MaxCrashes: 1, Window: time.Hour, Pause: time.Millisecond, Grace: 200 * time.Millisecond},
			StartTimeout: startTimeout,
			Logf:         logs.logf,
			OnReady:      func(e registry.Entry) { ready <- e },
		})
	}()
	return dir, logs, ready, done
}

func waitDone(t *testing.T, done <-chan error, logs *logBuf) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(60 * time.Second): // a bound on a hang, not a timing assumption
		t.Fatalf("the manager did not return:\n%s", logs)
		return nil
	}
}

func readEnd(t *testing.T, dir registry.Dir) registry.End {
	t.Helper()
	end, ok, err := registry.ReadEnd(dir)
	if !ok || err != nil {
		t.Fatalf("no end note: %v", err)
	}
	return end
}

// TestRun_KilledFromOutside: an engine SIGKILLed by another process is
// written down as killed by SIGKILL, sender unknown, and the manager's
// log says it did not send it.
func TestRun_KilledFromOutside(t *testing.T) {
	dir, logs, ready, done := run(t, context.Background(), "serve", time.Minute)
	var e registry.Entry
	select {
	case e = <-ready:
	case err := <-done:
		t.Fatalf("manager returned %v:\n%s", err, logs)
	}
	if err := syscall.Kill(e.EnginePID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := waitDone(t, done, logs); !errors.Is(err, supervise.ErrGaveUp) {
		t.Fatalf("err = %v", err)
	}
	end := readEnd(t, dir)
	if end.PID != e.EnginePID || end.Signal != "SIGKILL" || end.Sender != registry.SenderUnknown || end.Reason != "" || end.Sent || end.Start == 0 {
		t.Errorf("end note %+v", end)
	}
	if !strings.Contains(logs.String(), "killed by SIGKILL; not sent by this manager") || strings.Contains(logs.String(), "sending SIGKILL") {
		t.Errorf("log:\n%s", logs)
	}
}

// TestRun_StartTimeoutKill: an engine that does not complete its
// start-up protocol is SIGKILLed by the manager, which logs it before
// sending it and writes down that it did and why.
func TestRun_StartTimeoutKill(t *testing.T) {
	dir, logs, _, done := run(t, context.Background(), "silent", 100*time.Millisecond)
	if err := waitDone(t, done, logs); !errors.Is(err, supervise.ErrGaveUp) {
		t.Fatalf("err = %v:\n%s", err, logs)
	}
	end := readEnd(t, dir)
	if end.Signal != "SIGKILL" || end.Sender != registry.SenderManager || end.SenderPID != os.Getpid() ||
		!strings.Contains(end.Reason, "start-up protocol") || end.Sent {
		t.Errorf("end note %+v", end)
	}
	log := logs.String()
	sent, crashed := strings.Index(log, "sending SIGKILL to the engine"), strings.Index(log, "sent by this manager: its start-up protocol failed")
	if sent < 0 || crashed < sent {
		t.Errorf("the kill is not logged before the crash:\n%s", log)
	}
}

// TestRun_StopGraceKill: an engine that ignores SIGTERM when the manager
// stops is SIGKILLed after the grace, and the note says the manager did
// and why.
func TestRun_StopGraceKill(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir, logs, ready, done := run(t, ctx, "stubborn", time.Minute)
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("manager returned %v:\n%s", err, logs)
	}
	cancel()
	if err := waitDone(t, done, logs); err != nil {
		t.Fatalf("err = %v", err)
	}
	end := readEnd(t, dir)
	if end.Signal != "SIGKILL" || end.Sender != registry.SenderManager || !strings.Contains(end.Reason, "did not exit within") {
		t.Errorf("end note %+v", end)
	}
	if log := logs.String(); !strings.Contains(log, "sending SIGTERM") || !strings.Contains(log, "sending SIGKILL") {
		t.Errorf("log:\n%s", log)
	}
}
