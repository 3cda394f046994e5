package registry

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/opx-dev/opx/internal/regularfile"
	"golang.org/x/sys/unix"
)

// Entry describes a running engine.
type Entry struct {
	Workspace  string `json:"workspace"`
	ManagerPID int    `json:"manager_pid"`
	EnginePID  int    `json:"engine_pid"`
	Port       int    `json:"port"`
	Ledger     string `json:"ledger"`
	// ManagerStart and EngineStart are the processes' start times
	// (StartTime), so a reused pid is never taken for them.
	ManagerStart uint64 `json:"manager_start"`
	EngineStart  uint64 `json:"engine_start"`
}

// Addr is the engine's gRPC address.
func (e Entry) Addr() string { return fmt.Sprintf("127.0.0.1:%d", e.Port) }

// EngineAlive reports whether the entry's engine still runs.
func (e Entry) EngineAlive() bool { return alive(e.EnginePID, e.EngineStart) }

// ManagerAlive reports whether the entry's manager still runs.
func (e Entry) ManagerAlive() bool { return alive(e.ManagerPID, e.ManagerStart) }

func alive(pid int, start uint64) bool {
	st, err := StartTime(pid)
	return err == nil && start != 0 && st == start
}

// Dir is a workspace's state directory (the ledger's directory).
type Dir string

func (d Dir) path(name string) string { return filepath.Join(string(d), name) }

// Lock is a held registry lock.
type Lock struct {
	f   *os.File
	dir Dir
}

// Acquire takes the workspace's lock, or fails with ErrRunning (naming the
// running manager's pid when known).
func Acquire(dir Dir) (*Lock, error) {
	if err := os.MkdirAll(string(dir), 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(dir.path("engine.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	// Lookup takes the lock shared for an instant to learn whether a
	// manager holds it (`opx status` does, polling while `opx start`
	// comes up): a lock held without a manager's entry is waited for a
	// little before it means another manager.
	deadline := time.Now().Add(acquireWait)
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return &Lock{f: f, dir: dir}, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", dir.path("engine.lock"), err)
		}
		if e, rerr := read(dir); rerr == nil && e.ManagerPID > 0 && e.ManagerAlive() {
			f.Close()
			return nil, fmt.Errorf("%w (manager pid %d, engine on %s)", ErrRunning, e.ManagerPID, e.Addr())
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, ErrRunning
		}
		if testHookLockBusy != nil {
			testHookLockBusy()
		}
		time.Sleep(acquireRetry)
	}
}

// How long Acquire waits for a lock held with no manager's entry, and how
// often it tries.
const (
	acquireWait  = 3 * time.Second
	acquireRetry = 10 * time.Millisecond
)

// testHookLockBusy is called when Acquire finds the lock held and waits.
var testHookLockBusy func()

// Stale returns the entry a manager that died left behind, if its engine
// still runs (an orphan the new manager must stop before it starts its
// own), and removes the entry when its engine is gone.
func (l *Lock) Stale() (Entry, bool) {
	e, err := read(l.dir)
	if err != nil {
		return Entry{}, false
	}
	if e.EngineAlive() {
		return e, true
	}
	l.Unpublish()
	return Entry{}, false
}

// NewToken writes a fresh client token (128 random bits, hex) to the token
// file, 0600, and returns it.
func (l *Lock) NewToken() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	tok := hex.EncodeToString(b[:])
	if err := writeFile(l.dir.path("client.token"), []byte(tok+"\n")); err != nil {
		return "", err
	}
	return tok, nil
}

// Publish writes the engine entry, with the start times of the processes
// it names when they are not set.
func (l *Lock) Publish(e Entry) error {
	if e.ManagerStart == 0 {
		e.ManagerStart, _ = StartTime(e.ManagerPID)
	}
	if e.EngineStart == 0 {
		e.EngineStart, _ = StartTime(e.EnginePID)
	}
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	return writeFile(l.dir.path("engine.json"), append(b, '\n'))
}

// Unpublish removes the engine entry (its engine has exited; the manager
// may start another).
func (l *Lock) Unpublish() {
	os.Remove(l.dir.path("engine.json"))
}

// Release removes the entry and token and drops the lock.
func (l *Lock) Release() error {
	os.Remove(l.dir.path("engine.json"))
	os.Remove(l.dir.path("client.token"))
	return l.f.Close() // closing drops the flock
}

// Lookup returns the running engine and the client token. It fails with
// ErrNotRunning when no manager runs (noting an orphaned engine, if one
// runs), and with ErrStarting while the manager's engine is not up.
func Lookup(dir Dir) (Entry, string, error) {
	f, err := os.OpenFile(dir.path("engine.lock"), os.O_RDONLY, 0)
	if err != nil {
		return Entry{}, "", ErrNotRunning
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB); err == nil {
		// Nobody holds it: whatever engine.json says is stale.
		defer unix.Flock(int(f.Fd()), unix.LOCK_UN)
		if e, ok := orphan(dir); ok {
			return Entry{}, "", fmt.Errorf("%w; but its engine (pid %d) still runs without its manager: opx stop stops it", ErrNotRunning, e.EnginePID)
		}
		return Entry{}, "", ErrNotRunning
	}
	e, err := read(dir)
	if err != nil || e.Port == 0 || !e.EngineAlive() {
		return Entry{}, "", ErrStarting
	}
	tok, err := os.ReadFile(dir.path("client.token"))
	if err != nil {
		return Entry{}, "", fmt.Errorf("read client token: %w", err)
	}
	return e, string(trimNL(tok)), nil
}

// Orphan returns the engine that runs for the workspace without its
// manager (the manager died and the engine did not follow), or
// ErrNotRunning.
func Orphan(dir Dir) (Entry, error) {
	f, err := os.OpenFile(dir.path("engine.lock"), os.O_RDONLY, 0)
	if err != nil {
		return Entry{}, ErrNotRunning
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB); err != nil {
		return Entry{}, ErrNotRunning // a manager holds it: not an orphan
	}
	defer unix.Flock(int(f.Fd()), unix.LOCK_UN)
	if e, ok := orphan(dir); ok {
		return e, nil
	}
	return Entry{}, ErrNotRunning
}

// orphan reads engine.json while no manager can take the lock (the caller
// holds it shared or exclusive) and returns its engine if it still runs;
// an entry whose engine is gone is removed with its token.
func orphan(dir Dir) (Entry, bool) {
	e, err := read(dir)
	if err != nil {
		return Entry{}, false
	}
	if e.EngineAlive() {
		return e, true
	}
	os.Remove(dir.path("engine.json"))
	os.Remove(dir.path("client.token"))
	return Entry{}, false
}

// Stop stops an entry's engine: SIGTERM, then SIGKILL after grace, each
// only if the pid still names the process registered. It returns once
// the engine is gone, or fails after another grace.
func Stop(e Entry, grace time.Duration) error { return stop(e, grace, nil) }

// StopNoted is Stop writing an end note (WriteEnd, sender SenderStop,
// with reason) in dir before each signal it sends, so the engine.crashed
// the next engine records for a run it had to SIGKILL says who did and
// why.
func StopNoted(dir Dir, e Entry, grace time.Duration, reason string) error {
	return stop(e, grace, func(sig syscall.Signal) {
		WriteEnd(dir, End{PID: e.EnginePID, Start: e.EngineStart, ExitCode: -1, Signal: unix.SignalName(sig),
			Sender: SenderStop, SenderPID: os.Getpid(), Reason: reason, Sent: true})
	})
}

func stop(e Entry, grace time.Duration, before func(syscall.Signal)) error {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		if before != nil {
			if _, err := StartTime(e.EnginePID); err != nil {
				return nil // gone: nothing to note
			}
			before(sig)
		}
		if err := signal(e.EnginePID, e.EngineStart, sig); errors.Is(err, ErrGone) {
			return nil
		} else if err != nil {
			return err
		}
		for deadline := time.Now().Add(grace); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if !e.EngineAlive() {
				return nil
			}
		}
	}
	return fmt.Errorf("engine pid %d did not exit after SIGKILL", e.EnginePID)
}

// read reads engine.json (a small file of opx's own: at most 64 KiB
// read). An entry written before entries carried start times has its
// engine recognised by its command line (legacyEngineStart), so that an
// engine such a manager left running is still found and stopped.
func read(dir Dir) (Entry, error) {
	var e Entry
	b, err := regularfile.Read(dir.path("engine.json"), 64<<10)
	if err != nil {
		return e, err
	}
	if err := json.Unmarshal(b, &e); err != nil {
		return e, err
	}
	if e.EngineStart == 0 {
		e.EngineStart = legacyEngineStart(e.EnginePID, e.Workspace)
	}
	return e, nil
}

// writeFile writes atomically (temp file, rename), 0600.
func writeFile(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func trimNL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// Share registers in dir a service of the process that holds l (one
// process serving many ledgers, each in its own directory: the fleet
// collector's mirrors) without a descriptor of dir's own: dir's
// engine.lock becomes a symbolic link to l's lock file, so Lookup in
// dir finds it held for as long as l is, and the link names a lock
// nobody holds once l is released. It writes a fresh client token and e
// in dir and returns the token; Unshare removes them.
func (l *Lock) Share(dir Dir, e Entry) (string, error) {
	if err := os.MkdirAll(string(dir), 0o700); err != nil {
		return "", err
	}
	own, err := filepath.Abs(l.dir.path("engine.lock"))
	if err != nil {
		return "", err
	}
	abs, err := filepath.Abs(string(dir))
	if err != nil {
		return "", err
	}
	target, err := filepath.Rel(abs, own)
	if err != nil {
		target = own
	}
	link := dir.path("engine.lock")
	if have, err := os.Readlink(link); err != nil || have != target {
		tmp := link + ".link"
		os.Remove(tmp)
		if err := os.Symlink(target, tmp); err != nil {
			return "", err
		}
		if err := os.Rename(tmp, link); err != nil {
			os.Remove(tmp)
			return "", err
		}
	}
	shared := &Lock{dir: dir}
	tok, err := shared.NewToken()
	if err != nil {
		return "", err
	}
	if err := shared.Publish(e); err != nil {
		Unshare(dir)
		return "", err
	}
	return tok, nil
}

// Unshare removes the entry and token Share wrote in dir.
func Unshare(dir Dir) {
	os.Remove(dir.path("engine.json"))
	os.Remove(dir.path("client.token"))
}
