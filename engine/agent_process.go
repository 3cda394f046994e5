package engine

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"time"

	"github.com/opx-dev/opx/engine/supervise"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
)

// superviseAgent spawns the agent with a fresh token each time and
// restarts it within its own crash budget, recording each step.
func (e *Engine) superviseAgent(ctx context.Context) error {
	restarts := 0
	spawn := func(ctx context.Context) (*exec.Cmd, error) {
		tok, err := newToken()
		if err != nil {
			return nil, err
		}
		e.mu.Lock()
		e.agentToken = tok
		e.mu.Unlock()
		e.mu.Lock()
		refused := e.agentRefused
		e.mu.Unlock()
		if refused != "" {
			return nil, fmt.Errorf("%w: %s", errAgentRefused, refused)
		}
		cmd, err := e.opts.SpawnAgent(ctx, AgentLaunch{Addr: fmt.Sprintf("127.0.0.1:%d", e.port), Token: tok, Canary: e.canaryTargets})
		if err != nil {
			return nil, err
		}
		// Recorded here rather than on the Started event, so it precedes
		// anything the new agent sends.
		e.record(ctx, ledger.Async, "", &event.AgentSpawned{AgentID: fmt.Sprintf("agent-%d", restarts+1), PID: cmd.Process.Pid, Restart: restarts,
			Sandbox: e.agentSandbox()})
		return cmd, nil
	}
	err := supervise.Run(ctx, e.opts.AgentPolicy, spawn, func(ev supervise.Event) {
		agentID := fmt.Sprintf("agent-%d", restarts+1)
		switch ev.Kind {
		case supervise.Started:
			e.mu.Lock()
			e.agentPID = ev.Pid
			e.mu.Unlock()
		case supervise.Stopped, supervise.Restarted:
			e.agentGone()
			e.record(ctx, ledger.Async, "", &event.AgentExited{AgentID: agentID, PID: ev.Pid, ExitCode: ev.ExitCode, Reason: string(ev.Kind)})
			restarts++
		case supervise.Crashed, supervise.GaveUp:
			e.agentGone()
			detail := fmt.Sprintf("agent exited with status %d", ev.ExitCode)
			if ev.Signal != "" {
				detail = "agent killed by signal " + ev.Signal
			}
			if ev.Kind == supervise.GaveUp {
				detail += fmt.Sprintf("; %d crashes in the window, not respawning", ev.Crashes)
			}
			e.mu.Lock()
			refused := e.agentRefused
			e.mu.Unlock()
			if refused != "" {
				detail += "; not respawned: " + refused
			}
			e.record(ctx, ledger.Sync, "", &event.AgentCrashed{AgentID: agentID, PID: ev.Pid, ExitCode: ev.ExitCode, Signal: ev.Signal,
				Detail: detail, Respawn: ev.Kind == supervise.Crashed && refused == ""})
			e.failInflight("agent crashed: " + detail)
			restarts++
		}
	})
	if errors.Is(err, context.Canceled) || errors.Is(ctx.Err(), context.Canceled) {
		return nil
	}
	return err
}

// agentSandbox is the sandbox an agent or sub-agent is started under:
// what `opx internal-agent` applies to itself on this kernel (Landlock at
// its ABI with no path granted, seccomp on every thread, TCP connect to
// the engine's port only), or none where the kernel has no sandbox. The
// agent's canary then says whether it holds.
func (e *Engine) agentSandbox() event.SandboxConfig {
	c := event.SandboxConfig{Mechanism: "none", ReadPaths: []string{}, WritePaths: []string{}, ConnectPort: e.port}
	if caps := e.sandboxCaps; caps.Filesystem && caps.Seccomp {
		c.Mechanism, c.LandlockABI, c.Seccomp = caps.Mechanism, caps.LandlockABI, true
	}
	return c
}

// errAgentRefused ends agent supervision after an agent was killed for its
// sandbox.
var errAgentRefused = errors.New("agent refused")

// agentGone forgets the connected agent.
func (e *Engine) agentGone() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.agent != nil {
		e.agent = nil
		e.agentReady = make(chan struct{})
	}
	e.agentPID = 0
}

// waitAgent returns the connected agent, waiting up to d for one.
func (e *Engine) waitAgent(ctx context.Context, d time.Duration) (*agentConn, error) {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		e.mu.Lock()
		a, ready := e.agent, e.agentReady
		e.mu.Unlock()
		if a != nil {
			return a, nil
		}
		select {
		case <-ready:
		case <-t.C:
			return nil, errors.New("no agent connected")
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// shutdownAgent asks the connected agent to stop.
func (e *Engine) shutdownAgent(reason string) {
	e.mu.Lock()
	a := e.agent
	e.mu.Unlock()
	if a != nil {
		_ = a.send(context.Background(), e, "", &event.Shutdown{Reason: reason},
			&opxv1.EngineDirective{Directive: &opxv1.EngineDirective_Shutdown{Shutdown: &opxv1.ShutdownDirective{Reason: reason}}})
	}
}
