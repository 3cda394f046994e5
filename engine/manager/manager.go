// Package manager is the process manager behind `opx start`: it takes the
// workspace's registry lock, starts the engine, reads its start-up
// protocol, publishes where it listens, and restarts it by the crash
// budget of the process model.
//
// # Invariants
//
//   - One manager per workspace (the registry lock), taken before the
//     engine starts and released after it is gone.
//   - An engine that does not complete the stdout protocol (PORT:, then
//     WEB_*) within StartTimeout is killed, which counts as a crash.
//   - The registry names an engine only while it is up; the entry is
//     rewritten with the new port after every restart.
package manager

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/opx-dev/opx/engine/registry"
	"github.com/opx-dev/opx/engine/supervise"
)

// Options configure a manager.
type Options struct {
	Workspace string
	StateDir  registry.Dir
	Ledger    string
	// Engine returns the engine command (not started) given the client
	// token file.
	Engine       func(tokenFile string) *exec.Cmd
	Policy       supervise.Policy
	StartTimeout time.Duration // default 30 s
	Logf         func(format string, args ...any)
	// OnReady is called each time an engine completed the protocol.
	OnReady func(registry.Entry)
}

// ErrStartTimeout is reported when an engine does not announce its port
// in time.
var ErrStartTimeout = errors.New("engine did not complete its start-up protocol in time")

// Run manages the engine until ctx ends (the engine is stopped: nil), the
// engine stops cleanly (nil), or it crashes too often (supervise.ErrGaveUp).
func Run(ctx context.Context, o Options) error {
	if o.StartTimeout <= 0 {
		o.StartTimeout = 30 * time.Second
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	lock, err := registry.Acquire(o.StateDir)
	if err != nil {
		return err
	}
	defer lock.Release()
	if _, err := lock.NewToken(); err != nil {
		return fmt.Errorf("client token: %w", err)
	}
	tokenFile := string(o.StateDir) + "/client.token"

	spawn := func(ctx context.Context) (*exec.Cmd, error) {
		cmd := o.Engine(tokenFile)
		out, err := cmd.StdoutPipe()
		if err != nil {
			return nil, err
		}
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		go func() {
			port, err := readProtocol(out, o.StartTimeout)
			if err != nil {
				o.Logf("opx: engine (pid %d): %v; killing it", cmd.Process.Pid, err)
				cmd.Process.Kill()
				io.Copy(io.Discard, out)
				return
			}
			e := registry.Entry{Workspace: o.Workspace, ManagerPID: os.Getpid(), EnginePID: cmd.Process.Pid, Port: port, Ledger: o.Ledger}
			if err := lock.Publish(e); err != nil {
				o.Logf("opx: publish the engine in the registry: %v", err)
			}
			if o.OnReady != nil {
				o.OnReady(e)
			}
			io.Copy(io.Discard, out)
		}()
		return cmd, nil
	}
	err = supervise.Run(ctx, o.Policy, spawn, func(ev supervise.Event) {
		switch ev.Kind {
		case supervise.Crashed:
			o.Logf("opx: engine (pid %d) crashed (exit %d%s); %d crash(es) in the last window; restarting", ev.Pid, ev.ExitCode, sig(ev.Signal), ev.Crashes)
		case supervise.Restarted:
			o.Logf("opx: engine asked for a restart; restarting")
		case supervise.GaveUp:
			o.Logf("opx: engine crashed %d times within the crash window; giving up", ev.Crashes)
		}
	})
	if errors.Is(err, context.Canceled) {
		return nil
	}
	if errors.Is(err, supervise.ErrGaveUp) {
		return fmt.Errorf("the engine keeps crashing: %w (see the messages above and opx ledger tail)", err)
	}
	return err
}

func sig(s string) string {
	if s == "" {
		return ""
	}
	return ", signal " + s
}

// readProtocol reads the engine's start-up lines: PORT:<port>, then one of
// WEB:<port>, WEB_FAILED:<port>:<error> or WEB_DISABLED.
func readProtocol(r io.Reader, timeout time.Duration) (int, error) {
	type res struct {
		port int
		err  error
	}
	done := make(chan res, 1)
	go func() {
		sc := bufio.NewScanner(r)
		port := 0
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			switch {
			case strings.HasPrefix(line, "PORT:"):
				p, err := strconv.Atoi(strings.TrimPrefix(line, "PORT:"))
				if err != nil || p <= 0 || p > 65535 {
					done <- res{0, fmt.Errorf("bad start-up line %q", line)}
					return
				}
				port = p
			case line == "WEB_DISABLED", strings.HasPrefix(line, "WEB:"), strings.HasPrefix(line, "WEB_FAILED:"):
				if port == 0 {
					done <- res{0, fmt.Errorf("%q before PORT:", line)}
					return
				}
				done <- res{port, nil}
				return
			}
		}
		done <- res{0, fmt.Errorf("engine closed its stdout before the start-up protocol ended")}
	}()
	select {
	case r := <-done:
		return r.port, r.err
	case <-time.After(timeout):
		return 0, fmt.Errorf("%w (%v)", ErrStartTimeout, timeout)
	}
}
