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
	"sync"
	"syscall"
	"time"

	"github.com/opx-dev/opx/engine/registry"
	"github.com/opx-dev/opx/engine/supervise"
)

// Options configure a manager.
type Options struct {
	Workspace string
	StateDir  registry.Dir
	Ledger    string
	// Engine returns the engine command (not started). The manager adds
	// the liveness pipe as the child's descriptor spec.LivenessFD, so the
	// command must not set ExtraFiles.
	Engine       func(spec EngineSpec) *exec.Cmd
	Policy       supervise.Policy
	StartTimeout time.Duration // default 30 s
	Logf         func(format string, args ...any)
	// OnReady is called each time an engine completed the protocol.
	OnReady func(registry.Entry)
}

// EngineSpec is what an engine command is built with.
type EngineSpec struct {
	TokenFile string // the client token file
	// LivenessFD is the engine's descriptor of the liveness pipe: it
	// reads EOF from it when the manager is gone.
	LivenessFD int
}

// livenessFD is the liveness pipe's number in the engine: the first of
// ExtraFiles.
const livenessFD = 3

// DeathSignal is the engine's parent-death signal. It is not SIGTERM
// because the kernel sends it as the manager's threads exit, while
// getppid() may still name the dying manager: the engine could not tell
// it from a SIGTERM sent by a live manager, and it must record that its
// manager is gone.
const DeathSignal = syscall.SIGUSR1

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
	if e, ok := lock.Stale(); ok {
		o.Logf("opx: the engine (pid %d) of a manager that is gone (pid %d) still runs; stopping it", e.EnginePID, e.ManagerPID)
		if err := registry.StopNoted(o.StateDir, e, o.Policy.Grace+5*time.Second, fmt.Sprintf("the engine of a manager that is gone (pid %d), stopped by the next manager", e.ManagerPID)); err != nil {
			return fmt.Errorf("stop the engine left running: %w", err)
		}
		lock.Unpublish()
	}
	if _, err := lock.NewToken(); err != nil {
		return fmt.Errorf("client token: %w", err)
	}
	tokenFile := string(o.StateDir) + "/client.token"
	// The liveness pipe: every engine gets the read end; the write end
	// stays here, never written, until this process ends.
	alive, keep, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("liveness pipe: %w", err)
	}
	defer alive.Close()
	defer keep.Close()

	var refusal refusalNote
	kills := &killLedger{dir: o.StateDir, logf: o.Logf}
	// protocolRead is closed when the last engine's start-up lines are
	// read. spawn and the code after supervise.Run run in this goroutine.
	var protocolRead chan struct{}
	spawn := func(ctx context.Context) (*exec.Cmd, error) {
		cmd := o.Engine(EngineSpec{TokenFile: tokenFile, LivenessFD: livenessFD})
		cmd.ExtraFiles = []*os.File{alive}
		// Our own pipe, not StdoutPipe: Wait closes that one when the
		// engine exits, possibly before its last line is read.
		out, w, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		cmd.Stdout = w
		err = supervise.StartTied(cmd, DeathSignal)
		w.Close()
		if err != nil {
			out.Close()
			return nil, err
		}
		kills.started(cmd.Process.Pid)
		done := make(chan struct{})
		protocolRead = done
		go func() {
			defer out.Close()
			port, refused, err := readProtocol(out, o.StartTimeout)
			switch {
			case refused != "":
				refusal.set(refused) // it exits 78 by itself
			case err != nil:
				kills.send(cmd, syscall.SIGKILL, "its start-up protocol failed: "+err.Error())
			default:
				e := registry.Entry{Workspace: o.Workspace, ManagerPID: os.Getpid(), EnginePID: cmd.Process.Pid, Port: port, Ledger: o.Ledger}
				if err := lock.Publish(e); err != nil {
					o.Logf("opx: publish the engine in the registry: %v", err)
				}
				if o.OnReady != nil {
					o.OnReady(e)
				}
			}
			close(done)
			io.Copy(io.Discard, out)
		}()
		return cmd, nil
	}
	err = supervise.Run(ctx, o.Policy, spawn, func(ev supervise.Event) {
		switch ev.Kind {
		case supervise.Started:
		case supervise.Signalling:
			// Recorded (log, end note) before the supervisor sends it.
			kills.noteSent(ev.Pid, ev.SigNum, ev.Reason)
			return
		case supervise.Stopped, supervise.Restarted, supervise.Refused, supervise.Crashed:
			lock.Unpublish() // the engine it names has exited
			end := kills.ended(ev)
			if ev.Kind == supervise.Crashed {
				o.Logf("opx: engine (pid %d) crashed (%s); %d crash(es) in the last window; restarting", ev.Pid, describeEnd(end), ev.Crashes)
			}
		default:
			lock.Unpublish()
		}
		switch ev.Kind {
		case supervise.Restarted:
			o.Logf("opx: engine asked for a restart; restarting")
		case supervise.GaveUp:
			o.Logf("opx: engine crashed %d times within the crash window; giving up", ev.Crashes)
		}
	})
	if errors.Is(err, context.Canceled) {
		return nil
	}
	if errors.Is(err, supervise.ErrRefused) {
		<-protocolRead // the engine has exited: its stdout is at EOF, or the timeout comes
		return fmt.Errorf("%w: %s", ErrEngineRefused, refusal.get())
	}
	if errors.Is(err, supervise.ErrGaveUp) {
		return fmt.Errorf("the engine keeps crashing: %w (see the messages above and opx ledger tail)", err)
	}
	return err
}

// refusalNote is the reason the last engine gave for refusing to start.
type refusalNote struct {
	mu     sync.Mutex
	reason string
}

func (n *refusalNote) set(reason string) {
	n.mu.Lock()
	n.reason = reason
	n.mu.Unlock()
}

func (n *refusalNote) get() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.reason == "" {
		return "it gave no reason (exit code 78)"
	}
	return n.reason
}

// maxRefusal bounds the reason the manager repeats from a REFUSED: line.
const maxRefusal = 1000

// readProtocol reads the engine's start-up lines: PORT:<port>, then one of
// WEB:<port>, WEB_FAILED:<port>:<error> or WEB_DISABLED; or, instead,
// REFUSED:<reason> from an engine that will not start (and exits 78).
func readProtocol(r io.Reader, timeout time.Duration) (port int, refused string, err error) {
	type res struct {
		port    int
		refused string
		err     error
	}
	done := make(chan res, 1)
	go func() {
		sc := bufio.NewScanner(r)
		port := 0
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			switch {
			case strings.HasPrefix(line, "REFUSED:"):
				reason := strings.TrimSpace(strings.TrimPrefix(line, "REFUSED:"))
				if len(reason) > maxRefusal {
					reason = reason[:maxRefusal] + "..."
				}
				done <- res{0, strings.ToValidUTF8(reason, "?"), ErrEngineRefused}
				return
			case strings.HasPrefix(line, "PORT:"):
				p, err := strconv.Atoi(strings.TrimPrefix(line, "PORT:"))
				if err != nil || p <= 0 || p > 65535 {
					done <- res{0, "", fmt.Errorf("bad start-up line %q", line)}
					return
				}
				port = p
			case line == "WEB_DISABLED", strings.HasPrefix(line, "WEB:"), strings.HasPrefix(line, "WEB_FAILED:"):
				if port == 0 {
					done <- res{0, "", fmt.Errorf("%q before PORT:", line)}
					return
				}
				done <- res{port, "", nil}
				return
			}
		}
		done <- res{0, "", fmt.Errorf("engine closed its stdout before the start-up protocol ended")}
	}()
	select {
	case r := <-done:
		return r.port, r.refused, r.err
	case <-time.After(timeout):
		return 0, "", fmt.Errorf("%w (%v)", ErrStartTimeout, timeout)
	}
}
