package engine

import (
	"bytes"
	"context"
	"fmt"

	"github.com/opx-dev/opx/engine/agentwire"
	"github.com/opx-dev/opx/engine/broadcast"
	"github.com/opx-dev/opx/engine/executor"
	"github.com/opx-dev/opx/engine/judge"
	"github.com/opx-dev/opx/engine/llm"
	"github.com/opx-dev/opx/engine/mcp"
	"github.com/opx-dev/opx/engine/undo"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"github.com/opx-dev/opx/replay/projection"
)

// What the rooms above the core borrow of it, as methods, so that none of
// them needs a field of the core: the services of engine/grpcapi, the LLM
// gateway (engine/gateway), the mcp-proxy sessions and hook sessions, the
// rerun driver (engine/redrive) and the sub-agents (engine/subagent, the
// last section).

// Ledger is the ledger the engine records in (Options.Ledger).
func (e *Engine) Ledger() *ledger.Ledger { return e.opts.Ledger }

// Chronicle is the engine's Chronicle: its snapshots and rollbacks.
func (e *Engine) Chronicle() *undo.Chronicle { return e.chron }

// Logf reports to the engine's operator (Options.Logf).
func (e *Engine) Logf(format string, args ...any) { e.opts.Logf(format, args...) }

// Stopping is closed once the engine stops (Run's context is done):
// followers leave.
func (e *Engine) Stopping() <-chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.running.Done()
}

// CheckpointOnDemand records a checkpoint for a client that needs one
// covering an entry appended since the latest, and returns once it is
// durable; ErrStopping once the engine stops (session.go's
// checkpointOnDemand). Callers bound how often (checkpoint.OnDemand).
func (e *Engine) CheckpointOnDemand(ctx context.Context) error { return e.checkpointOnDemand(ctx) }

// DurableHead is the head a client may be told of (auth.go).
func DurableHead(l *ledger.Ledger) (ledger.Head, error) { return durableHead(l) }

// ClientName is the name a client call is recorded under: what the
// client says in its opx-client header, clipped, else "grpc".
func ClientName(ctx context.Context) string { return clientName(ctx) }

// Replaying is the driver re-driving a recorded session in replay mode
// (NewReplay), nil in a live engine.
func (e *Engine) Replaying() ReplayMode { return e.opts.replay }

// MCPRecorder is the Recorder MCP servers record through: a ledger
// failure stops the engine, as any of its own.
func (e *Engine) MCPRecorder() mcp.Recorder { return e.mcpRecorder() }

// Subscribe follows the events the engine publishes for session (its
// approvals, verdicts, ...) until the Subscription is closed.
func (e *Engine) Subscribe(session string) *Subscription { return e.bc.Subscribe(session) }

// Subscription is a client's (or a room's) following of a session's
// events (engine/broadcast).
type Subscription = broadcast.Subscription

// CrashedRun is the range of entries of the engine run that ended
// without engine.stopped, found when this engine started: from its
// engine.started (since) to the last entry it left (head); ok is false
// when the last run stopped cleanly.
func (e *Engine) CrashedRun() (since, head uint64, ok bool) {
	return e.crashedSince, e.crashedHead, e.crashedSince > 0
}

// StartedSeq is this engine's engine.started.
func (e *Engine) StartedSeq() uint64 { return e.startedSeq }

// What the rerun driver (engine/redrive) may do to an engine in replay
// mode: the few internals it reaches, as methods, so that it needs no
// field of the core.

// ReadOnlyPolicyText is the read-only policy's text (a record names it by
// its hash).
const ReadOnlyPolicyText = readOnlyPolicyText

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

// What the engine lends its sub-agents.

// Options returns the options the engine runs with.
func (e *Engine) Options() Options { return e.opts }

// Recorder returns the engine's recorder.
func (e *Engine) Recorder() *Recorder { return e.rec }

// Pipeline returns the engine's tool pipeline.
func (e *Engine) Pipeline() *Pipeline { return e.pipe }

// Approvals returns the engine's pending approvals.
func (e *Engine) Approvals() *Approvals { return e.approvals }

// Tools returns the engine's tool registry.
func (e *Engine) Tools() *executor.Registry { return e.tools }

// StreamsEnded is closed once the engine has stopped its agent and
// sub-agents, before its server's graceful stop: an agent stream still
// open then is ended by the engine.
func (e *Engine) StreamsEnded() <-chan struct{} { return e.streamsEnded }

// Fatal stops the engine because the ledger failed.
func (e *Engine) Fatal(err error) { e.fatal(err) }

// ReadSession reads a session from the sessions projection.
func (e *Engine) ReadSession(ctx context.Context, id string) (projection.Session, bool, error) {
	return e.readSession(ctx, id)
}

// JudgeCanary decides what becomes of an agent or sub-agent from its
// canary: accepted, warned or killed, with the reason.
func (e *Engine) JudgeCanary(canary event.Canary, canaryErr error) (action, reason string) {
	return e.judgeCanary(canary, canaryErr)
}

// AgentSandbox is the sandbox an agent process is started in.
func (e *Engine) AgentSandbox() event.SandboxConfig { return e.agentSandbox() }

// What the client service (engine/grpcapi) reads of the engine, besides
// SendMessage, Status and RequestStop (message.go).

// ReadHistory reads a session's messages, oldest first, from the history
// projection (limit 0: all).
func (e *Engine) ReadHistory(session string, offset, limit int) ([]*opxv1.ChatMessage, error) {
	return e.readHistory(session, offset, limit)
}

// OTRApproval is what the engine judged of an off-the-record session's
// pending approval (the ledger holds commitments only); ok false for any
// other.
func (e *Engine) OTRApproval(session, id string) (arguments, reason string, ok bool) {
	return e.rec.otr.Approval(session, id)
}

// UnixNano parses an entry timestamp; 0 if it does not parse.
func UnixNano(ts string) int64 { return unixNano(ts) }

// What the LLM gateway (engine/gateway) asks of the engine.

// SubAgentByToken is the live sub-agent whose token tok is, or nil.
func (e *Engine) SubAgentByToken(tok string) SubAgent { return e.subs.ByToken(tok) }

// AgentToken is the token of the agent last spawned ("" before the
// first, which no token matches).
func (e *Engine) AgentToken() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.agentToken
}

// MessageSession is the session of the message id in flight; ok is
// false when no such message is.
func (e *Engine) MessageSession(id string) (session string, ok bool) {
	if f := e.message(id); f != nil {
		return f.session, true
	}
	return "", false
}

// NextRequestID names the next model request (req_N, counted with the
// engine's other ids).
func (e *Engine) NextRequestID() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.msgN++
	return fmt.Sprintf("req_%d", e.msgN)
}

// Model is the provider the agents' model calls go to and its retry
// policy (Options.Provider, Options.Retry).
func (e *Engine) Model() (llm.Provider, llm.RetryPolicy) { return e.opts.Provider, e.opts.Retry }

// proposalKey carries the call's Proposal to executors that act for the
// calling agent (the agent tools): its session, message and call.
type proposalKey struct{}

func withProposal(ctx context.Context, p judge.Proposal) context.Context {
	return context.WithValue(ctx, proposalKey{}, p)
}

// ProposalOf returns the Proposal of the call an executor runs for, put
// there by the pipeline; false outside the pipeline.
func ProposalOf(ctx context.Context) (judge.Proposal, bool) {
	p, ok := ctx.Value(proposalKey{}).(judge.Proposal)
	return p, ok
}

// What the engine lends its sub-agents beside what every room borrows
// (accessors.go).

// RecordFromSub records a payload built from sub-agent subagent's input:
// one that does not validate is recorded as an agent.error instead.
func (e *Engine) RecordFromSub(ctx context.Context, d ledger.Durability, session, subagent string, p event.Payload, blobs ...[]byte) uint64 {
	return e.recordFromSub(ctx, d, session, subagent, p, blobs...)
}

// SubAgentLaunch is what starts sub-agent id of session parent: the
// engine's address and canary targets, and its token.
func (e *Engine) SubAgentLaunch(tok, id, parent string, maxRounds int) AgentLaunch {
	return AgentLaunch{Addr: fmt.Sprintf("127.0.0.1:%d", e.port), Token: tok,
		Canary: e.canaryTargets, SubAgentID: id, ParentSession: parent, MaxRounds: maxRounds}
}

// AgentConn is an accepted agent or sub-agent stream (sends recorded
// first, in order).
type AgentConn = agentConn

// NewAgentConn returns the connection of agent id over stream.
func NewAgentConn(id string, stream agentwire.Stream) *AgentConn {
	return &agentConn{id: id, stream: stream}
}

// Send records p and sends d on conn, in order.
func (e *Engine) Send(ctx context.Context, conn *AgentConn, session string, p event.Payload, d *opxv1.EngineDirective, blobs ...[]byte) error {
	return conn.send(ctx, e, session, p, d, blobs...)
}

// Reply records and sends a tool result.
func (e *Engine) Reply(ctx context.Context, conn *AgentConn, session, subagent, callID, content string, isError bool) {
	e.reply(ctx, conn, session, subagent, callID, content, isError)
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

// Recovery of sub-agents after a crash is the core's: it reads only the
// ledger, and runs whether or not this engine has sub-agents of its own.

// failCrashedSubAgents records subagent.failed engine_crashed for each
// sub-agent spawned since the crashed engine's start (entry since) that
// no entry ended: their processes died with that engine (parent-death
// signal), so nothing of them can follow.
func (e *Engine) failCrashedSubAgents(ctx context.Context, since, head uint64) error {
	type open struct{ session, id string }
	var spawned []open
	ended := map[open]bool{}
	err := e.opts.Ledger.RangeRaw(since, head, func(seq uint64, raw []byte) error {
		if !bytes.Contains(raw, []byte(`"type":"subagent.`)) {
			return nil
		}
		en, err := ledger.ParseEntry(raw)
		if err != nil {
			return nil
		}
		id, _ := ledger.FieldString(en.Data, "subagent_id")
		k := open{en.Session, id}
		switch {
		case en.Type == event.TypeSubAgentSpawned:
			spawned = append(spawned, k)
		case event.SubAgentEnded(en.Type):
			ended[k] = true
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("load sub-agents: %w", err)
	}
	for _, k := range spawned {
		if ended[k] {
			continue
		}
		if _, err := e.rec.Record(ctx, ledger.Async, k.session, &event.SubAgentFailed{SubAgentID: k.id, Reason: event.SubAgentEngineCrashed,
			Detail: fmt.Sprintf("the engine started at entry %d crashed while it ran; its process died with it", since)}); err != nil {
			return err
		}
	}
	return nil
}
