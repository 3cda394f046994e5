package engine

import (
	"context"
	"fmt"

	"github.com/opx-dev/opx/engine/executor"
	"github.com/opx-dev/opx/engine/judge"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
)

// What the rerun driver (engine/redrive) may do to an engine in replay
// mode: the few internals it reaches, as methods, so that it needs no
// field of the core.

// ReadOnlyPolicyText is the read-only policy's text (a record names it by
// its hash).
const ReadOnlyPolicyText = readOnlyPolicyText

// NewToken returns 128 random bits in hex.
func NewToken() (string, error) { return newToken() }

// TitleOf is the title a session gets from its first message.
func TitleOf(s string) string { return titleOf(s) }

// StopReplay stops the engine as a client's Shutdown does, without the
// pause a reply needs: the replay is finished.
func (e *Engine) StopReplay() {
	e.mu.Lock()
	e.stopReason = "replay finished"
	stop := e.stop
	e.mu.Unlock()
	if stop != nil {
		stop(errShutdown)
	}
}

// ReplayProxy re-drives the recorded mcp-proxy session (no agent:
// engine/mcpproxy/replay.go).
func (e *Engine) ReplayProxy(ctx context.Context) { e.proxies.Replay(ctx) }

// AwaitAgent waits, as a client's message does, for the agent to connect;
// the error says why none did (refused: the reason).
func (e *Engine) AwaitAgent(ctx context.Context) error {
	if _, err := e.waitAgent(ctx, agentWait); err != nil {
		e.mu.Lock()
		refused := e.agentRefused
		e.mu.Unlock()
		if refused != "" {
			err = fmt.Errorf("the agent was refused: %s", refused)
		}
		return err
	}
	return nil
}

// SetMaxToolCalls sets the tool calls a message may make (0 or less: the
// default 50), as the engine run a replayed message arrived under had it.
func (e *Engine) SetMaxToolCalls(n int) {
	e.mu.Lock()
	e.opts.MaxToolCalls = n
	if e.opts.MaxToolCalls <= 0 {
		e.opts.MaxToolCalls = 50
	}
	e.mu.Unlock()
}

// Record records p and stops the engine if the ledger failed.
func (e *Engine) Record(ctx context.Context, d ledger.Durability, session string, p event.Payload, blobs ...[]byte) uint64 {
	return e.record(ctx, d, session, p, blobs...)
}

// SendMessage feeds a client message through the live SendMessage path.
func (e *Engine) SendMessage(req *opxv1.ClientMessageRequest, stream opxv1.ClientService_SendMessageServer) error {
	return (&clientService{e: e}).SendMessage(req, stream)
}

// Canary is the agent's sandbox status and summary as its canary
// reported them ("" before it did).
func (e *Engine) Canary() (status, summary string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.canary != nil {
		return e.canary.Status, e.canary.Summary
	}
	return "", ""
}

// SubAgent returns sub-agent id's session and a channel closed when it
// has ended; ok false when the engine has no such sub-agent.
func (e *Engine) SubAgent(id string) (session string, done <-chan struct{}, ok bool) {
	sa := e.subs.Get(id)
	if sa == nil {
		return "", nil, false
	}
	return sa.Session(), sa.Done(), true
}

// ExpireSubAgent fires sub-agent id's timeout at once: its end entry and
// the reason its parent reads are the engine's own.
func (e *Engine) ExpireSubAgent(id string) {
	if sa := e.subs.Get(id); sa != nil {
		sa.Expire()
	}
}

// KillSubAgent kills sub-agent id's process (it crashes).
func (e *Engine) KillSubAgent(id string) {
	if sa := e.subs.Get(id); sa != nil {
		sa.Kill()
	}
}

// ToolsFor is the registry that judges, snapshots and executes session's
// calls (SessionTools', else Tools).
func (p *Pipeline) ToolsFor(session string) *executor.Registry { return p.toolsFor(session) }

// RecordStarted records exec.started for prop; refusal, if not "", is
// why the call may not start.
func (p *Pipeline) RecordStarted(ctx context.Context, prop judge.Proposal) (refusal string, err error) {
	return p.recordStarted(ctx, prop)
}

// FlagResult has Shield read an untrusted tool result and records what it
// found.
func (p *Pipeline) FlagResult(ctx context.Context, prop judge.Proposal, def executor.ToolDef, result string) (string, error) {
	return p.flagResult(ctx, prop, def, result)
}
