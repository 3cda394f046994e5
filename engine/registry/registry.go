// Package registry maps a workspace to its running engine, so client
// commands find it and `opx start` refuses a second instance.
//
// # Layout
//
// Under <state dir>/opx/<workspace-id>/ (beside the ledger): "engine.lock"
// (held with flock by the process manager for as long as it runs),
// "engine.json" (manager pid, engine pid, gRPC port, workspace) and
// "client.token" (the per-engine client token, mode 0600).
//
// # Invariants
//
//   - At most one manager per workspace: the lock is taken before anything
//     else is written, and the kernel drops it when the manager dies, so a
//     crashed manager never blocks the next start.
//   - A stale engine.json (its manager gone) is never trusted: Lookup
//     checks the lock.
//   - The token file is created 0600 in a 0700 directory and is rewritten
//     at every start.
package registry

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Errors of the registry.
var (
	// ErrRunning is returned by Acquire when a manager already runs for
	// the workspace.
	ErrRunning = errors.New("opx is already running for this workspace")
	// ErrNotRunning is returned by Lookup when no manager runs.
	ErrNotRunning = errors.New("opx is not running for this workspace (start it with opx start)")
)

// Entry describes a running engine.
type Entry struct {
	Workspace  string `json:"workspace"`
	ManagerPID int    `json:"manager_pid"`
	EnginePID  int    `json:"engine_pid"`
	Port       int    `json:"port"`
	Ledger     string `json:"ledger"`
}

// Addr is the engine's gRPC address.
func (e Entry) Addr() string { return fmt.Sprintf("127.0.0.1:%d", e.Port) }

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
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			if e, rerr := read(dir); rerr == nil && e.ManagerPID > 0 {
				return nil, fmt.Errorf("%w (manager pid %d, engine on %s)", ErrRunning, e.ManagerPID, e.Addr())
			}
			return nil, ErrRunning
		}
		return nil, fmt.Errorf("lock %s: %w", dir.path("engine.lock"), err)
	}
	return &Lock{f: f, dir: dir}, nil
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

// Publish writes the engine entry.
func (l *Lock) Publish(e Entry) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	return writeFile(l.dir.path("engine.json"), append(b, '\n'))
}

// Release removes the entry and token and drops the lock.
func (l *Lock) Release() error {
	os.Remove(l.dir.path("engine.json"))
	os.Remove(l.dir.path("client.token"))
	return l.f.Close() // closing drops the flock
}

// Lookup returns the running engine and the client token, or
// ErrNotRunning.
func Lookup(dir Dir) (Entry, string, error) {
	f, err := os.OpenFile(dir.path("engine.lock"), os.O_RDONLY, 0)
	if err != nil {
		return Entry{}, "", ErrNotRunning
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB); err == nil {
		// Nobody holds it: whatever engine.json says is stale.
		unix.Flock(int(f.Fd()), unix.LOCK_UN)
		return Entry{}, "", ErrNotRunning
	}
	e, err := read(dir)
	if err != nil || e.Port == 0 {
		return Entry{}, "", fmt.Errorf("opx is starting for this workspace; try again in a moment")
	}
	tok, err := os.ReadFile(dir.path("client.token"))
	if err != nil {
		return Entry{}, "", fmt.Errorf("read client token: %w", err)
	}
	return e, string(trimNL(tok)), nil
}

func read(dir Dir) (Entry, error) {
	var e Entry
	b, err := os.ReadFile(dir.path("engine.json"))
	if err != nil {
		return e, err
	}
	return e, json.Unmarshal(b, &e)
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
