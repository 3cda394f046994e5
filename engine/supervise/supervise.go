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
)

// Event reports one step of the child's life.
type Event struct {
	Kind     EventKind
	Pid      int
	ExitCode int    // -1 when killed by a signal
	Signal   string // the signal that killed it, if any
	Crashes  int    // crashes inside the window, this one included
	Err      error
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
		waitErr := wait(ctx, cmd, p.Grace)
		if ctx.Err() != nil {
			code, sig := exitStatus(cmd)
			emit(Event{Kind: Stopped, Pid: cmd.Process.Pid, ExitCode: code, Signal: sig})
			return ctx.Err()
		}
		code, sig := exitStatus(cmd)
		ev := Event{Pid: cmd.Process.Pid, ExitCode: code, Signal: sig, Err: waitErr}
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
			emit(Event{Kind: GaveUp, Pid: ev.Pid, ExitCode: code, Signal: sig, Crashes: ev.Crashes})
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
// after grace.
func wait(ctx context.Context, cmd *exec.Cmd, grace time.Duration) error {
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	return Stop(cmd, done, grace)
}

// Stop sends SIGTERM and waits up to grace for done, then SIGKILLs and
// waits again.
func Stop(cmd *exec.Cmd, done <-chan error, grace time.Duration) error {
	_ = cmd.Process.Signal(syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		_ = cmd.Process.Kill()
		return <-done
	}
}

func exitStatus(cmd *exec.Cmd) (code int, sig string) {
	st := cmd.ProcessState
	if st == nil {
		return -1, ""
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return -1, ws.Signal().String()
	}
	return st.ExitCode(), ""
}

func describe(code int, sig string) string {
	if sig != "" {
		return "killed by " + sig
	}
	return fmt.Sprintf("exit code %d", code)
}
