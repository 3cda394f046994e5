package supervise

import (
	"context"
	"fmt"
	"os/exec"
	"syscall"
	"time"
)

// The exit codes a supervised child may use beside a crash.
const (
	// ExitRestart (EX_TEMPFAIL) asks for a restart: respawn at once, not a
	// crash.
	ExitRestart = 75
	// ExitRefused (EX_CONFIG) says the child refused to start for a reason
	// a retry cannot cure (its ledger is locked or unreadable, its
	// configuration is bad): the supervisor gives up at once instead of
	// spending its crash budget on it.
	ExitRefused = 78
)

// Policy is the restart policy. The zero value means the process model's
// defaults: 5 crashes in 60 s, 1 s pause, 5 s grace.
type Policy struct {
	MaxCrashes int
	Window     time.Duration
	Pause      time.Duration
	Grace      time.Duration
}

func (p *Policy) defaults() {
	if p.MaxCrashes <= 0 {
		p.MaxCrashes = 5
	}
	if p.Window <= 0 {
		p.Window = 60 * time.Second
	}
	if p.Pause <= 0 {
		p.Pause = time.Second
	}
	if p.Grace <= 0 {
		p.Grace = 5 * time.Second
	}
}

// Budget counts crashes in a sliding window.
type Budget struct {
	max     int
	window  time.Duration
	crashes []time.Time
}

// NewBudget returns a budget of max crashes per window.
func NewBudget(max int, window time.Duration) *Budget { return &Budget{max: max, window: window} }

// Crash records a crash at now and reports whether the budget is spent:
// max crashes inside the window.
func (b *Budget) Crash(now time.Time) (spent bool) {
	keep := b.crashes[:0]
	for _, t := range b.crashes {
		if now.Sub(t) < b.window {
			keep = append(keep, t)
		}
	}
	b.crashes = append(keep, now)
	return len(b.crashes) >= b.max
}

// Recent returns how many crashes are inside the window at now.
func (b *Budget) Recent(now time.Time) int {
	n := 0
	for _, t := range b.crashes {
		if now.Sub(t) < b.window {
			n++
		}
	}
	return n
}

// EventKind names what happened to the child.
type EventKind string

// Event kinds.
const (
	Started   EventKind = "started"
	Stopped   EventKind = "stopped"   // exit 0
	Restarted EventKind = "restarted" // exit 75
	Refused   EventKind = "refused"   // exit 78: not respawned
	Crashed   EventKind = "crashed"
	GaveUp    EventKind = "gave-up"
	// Signalling is emitted before the supervisor sends the child a
	// signal (SigNum, with Reason), so the caller can record who is
	// killed and why before it happens.
	Signalling EventKind = "signalling"
)

// Event reports one step of the child's life.
type Event struct {
	Kind     EventKind
	Pid      int
	ExitCode int    // -1 when killed by a signal
	Signal   string // the signal that killed it, if any
	// SigNum is the signal that killed it (Signal), or for Signalling
	// the one about to be sent; 0 when none.
	SigNum  syscall.Signal
	Reason  string // for Signalling: why the signal is sent
	Crashes int    // crashes inside the window, this one included
	Err     error
}

// Spawn starts a new child and returns it started. The supervisor waits
// for it; Spawn must not.
type Spawn func(ctx context.Context) (*exec.Cmd, error)

// Run supervises until the child stops cleanly (nil), ctx ends (the child
// is stopped; ctx.Err()), the child refuses to start (ErrRefused), the
// budget is spent (ErrGaveUp) or Spawn fails.
// onEvent, if set, is called for every event, synchronously.
func Run(ctx context.Context, p Policy, spawn Spawn, onEvent func(Event)) error {
	p.defaults()
	budget := NewBudget(p.MaxCrashes, p.Window)
	emit := func(e Event) {
		if onEvent != nil {
			onEvent(e)
		}
	}
	for {
		cmd, err := spawn(ctx)
		if err != nil {
			return fmt.Errorf("spawn: %w", err)
		}
		emit(Event{Kind: Started, Pid: cmd.Process.Pid})
		waitErr := wait(ctx, cmd, p.Grace, func(sig syscall.Signal, reason string) {
			emit(Event{Kind: Signalling, Pid: cmd.Process.Pid, ExitCode: -1, Signal: sig.String(), SigNum: sig, Reason: reason})
		})
		if ctx.Err() != nil {
			code, sig, num := exitStatus(cmd)
			emit(Event{Kind: Stopped, Pid: cmd.Process.Pid, ExitCode: code, Signal: sig, SigNum: num})
			return ctx.Err()
		}
		code, sig, num := exitStatus(cmd)
		ev := Event{Pid: cmd.Process.Pid, ExitCode: code, Signal: sig, SigNum: num, Err: waitErr}
		switch {
		case code == 0:
			ev.Kind = Stopped
			emit(ev)
			return nil
		case code == ExitRestart:
			ev.Kind = Restarted
			emit(ev)
			continue
		case code == ExitRefused:
			ev.Kind = Refused
			emit(ev)
			return fmt.Errorf("%w (exit code %d)", ErrRefused, code)
		}
		spent := budget.Crash(time.Now())
		ev.Kind, ev.Crashes = Crashed, budget.Recent(time.Now())
		emit(ev)
		if spent {
			emit(Event{Kind: GaveUp, Pid: ev.Pid, ExitCode: code, Signal: sig, SigNum: num, Crashes: ev.Crashes})
			return fmt.Errorf("%w: %d crashes within %s (last: %s)", ErrGaveUp, ev.Crashes, p.Window, describe(code, sig))
		}
		select {
		case <-time.After(p.Pause):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// wait waits for cmd; when ctx ends first it sends SIGTERM, then SIGKILL
// after grace, calling before ahead of each signal.
func wait(ctx context.Context, cmd *exec.Cmd, grace time.Duration, before func(syscall.Signal, string)) error {
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	return stop(cmd, done, grace, before)
}

// Stop sends SIGTERM and waits up to grace for done, then SIGKILLs and
// waits again.
func Stop(cmd *exec.Cmd, done <-chan error, grace time.Duration) error {
	return stop(cmd, done, grace, nil)
}

func stop(cmd *exec.Cmd, done <-chan error, grace time.Duration, before func(syscall.Signal, string)) error {
	if before != nil {
		before(syscall.SIGTERM, "stopping: the supervisor was told to stop")
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		if before != nil {
			before(syscall.SIGKILL, fmt.Sprintf("stopping: it did not exit within %v of SIGTERM", grace))
		}
		_ = cmd.Process.Kill()
		return <-done
	}
}

// exitStatus returns cmd's exit code (-1 when a signal ended it) and the
// signal, by name and number.
func exitStatus(cmd *exec.Cmd) (code int, sig string, num syscall.Signal) {
	st := cmd.ProcessState
	if st == nil {
		return -1, "", 0
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return -1, ws.Signal().String(), ws.Signal()
	}
	return st.ExitCode(), "", 0
}

func describe(code int, sig string) string {
	if sig != "" {
		return "killed by " + sig
	}
	return fmt.Sprintf("exit code %d", code)
}
