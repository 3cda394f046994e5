package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/opx-dev/opx/engine/registry"
)

// upWithin is how long Start and Wait wait for an engine to come up.
const upWithin = 35 * time.Second

// poll is how often the registry is looked at while waiting.
const poll = 50 * time.Millisecond

// Start runs `program start --workspace ws [extra...]` detached (its own
// session, output to engine.log in dir) and waits until the engine is in
// the registry of dir, saying so on w. It returns an error wrapping
// registry.ErrRunning if an engine already runs.
func Start(w io.Writer, program, ws string, dir registry.Dir, extra ...string) error {
	if _, _, err := registry.Lookup(dir); err == nil {
		return fmt.Errorf("%w", registry.ErrRunning)
	}
	if err := os.MkdirAll(string(dir), 0o700); err != nil {
		return err
	}
	logPath := filepath.Join(string(dir), "engine.log")
	log, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer log.Close()
	args := append([]string{"start", "--workspace", ws}, extra...)
	cmd := exec.Command(program, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.After(upWithin)
	for {
		if e, _, err := registry.Lookup(dir); err == nil {
			fmt.Fprintf(w, "opx: engine running on %s (manager pid %d, in the background)\n  log %s\n", e.Addr(), e.ManagerPID, logPath)
			return nil
		}
		select {
		case err := <-exited:
			if last := lastLine(logPath); last != "" {
				return fmt.Errorf("opx start exited early (%v): %s (see %s)", err, strings.TrimPrefix(last, "opx: "), logPath)
			}
			return fmt.Errorf("opx start exited early (%v); see %s", err, logPath)
		case <-deadline:
			return errors.New("the engine did not come up within 35 s; see " + logPath)
		case <-time.After(poll):
		}
	}
}

// Wait waits (up to 35 s, as Start does) for an engine of dir that is
// starting (registry.ErrStarting) to be running. It returns the
// registry's error for anything else, ctx's when ctx ends first.
func Wait(ctx context.Context, dir registry.Dir) error {
	var err error
	for range int(upWithin / poll) {
		if _, _, err = registry.Lookup(dir); err == nil {
			return nil
		}
		if !errors.Is(err, registry.ErrStarting) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(poll):
		}
	}
	return err
}

// lastLine returns the last non-empty line of the file at path, from its
// last 4 KiB.
func lastLine(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return ""
	}
	off := max(fi.Size()-4096, 0)
	b := make([]byte, fi.Size()-off)
	n, _ := f.ReadAt(b, off)
	lines := strings.Split(strings.TrimRight(string(b[:n]), "\n"), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
