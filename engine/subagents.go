package engine

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/opx-dev/opx/engine/agentwire"
	"github.com/opx-dev/opx/engine/executor"
	"github.com/opx-dev/opx/engine/judge"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
)

// What the core asks of the sub-agents, and what it lends them. The
// sub-agents live in engine/subagent, which imports the engine; the
// engine reaches them only through SubAgents, made by the function
// engine/subagent registers (UseSubAgents) when it is linked in.

// AgentsConfig configures sub-agents (config `agents:`).
type AgentsConfig struct {
	// Enabled offers the agent tools (group "agents") to the session's
	// agent; off, none is registered.
	Enabled bool
	// MaxConcurrent bounds the sub-agents alive at once; default 4.
	MaxConcurrent int
	// MaxRounds bounds a sub-agent's model calls; default 15.
	MaxRounds int
	// Timeout is a sub-agent's wall-clock limit from its spawn; default
	// 5 minutes.
	Timeout time.Duration
}

func (c AgentsConfig) withDefaults() AgentsConfig {
	if c.MaxConcurrent <= 0 {
		c.MaxConcurrent = 4
	}
	if c.MaxRounds <= 0 {
		c.MaxRounds = 15
	}
	if c.Timeout <= 0 {
		c.Timeout = 5 * time.Minute
	}
	return c
}

// GroupAgents is the tool group of the agent tools.
const GroupAgents = "agents"

// SubAgents is the engine's set of sub-agents, as the core uses it: the
// pipeline's hooks (Restrict, Admit, ExecScope), the authenticator's and
// the gateway's token check (ByToken), the engine's stop (Stop), its
// gRPC service, and the agent tools it offers.
type SubAgents interface {
	// Restrict blocks a sub-agent's call to a tool it was not granted;
	// nil lets the tiers judge (Pipeline.Restrict).
	Restrict(p judge.Proposal) *judge.Verdict
	// Admit lets a sub-agent's allowed call start unless it has ended
	// (Pipeline.Admit).
	Admit(p judge.Proposal) (release func(), refusal string)
	// ExecScope stops a sub-agent's execution when it ends
	// (Pipeline.ExecScope).
	ExecScope(p judge.Proposal) (context.Context, func())
	// ByToken returns the live sub-agent whose token tok is, or nil.
	ByToken(tok string) SubAgent
	// Get returns the sub-agent with id, or nil.
	Get(id string) SubAgent
	// Stop ends every live sub-agent (the engine is stopping) and waits
	// for their processes.
	Stop(reason string)
	// AgentTools is the executor of the agent tools (group GroupAgents).
	AgentTools() executor.Executor
	// Service serves SubAgentService on the engine's port.
	Service() opxv1.SubAgentServiceServer
	// Bind gives the set its engine, once New has made it.
	Bind(e *Engine)
}

// SubAgent is one sub-agent as the core sees it.
type SubAgent interface {
	ID() string
	// Session is its parent's session.
	Session() string
	// Model is the model its calls name ("" for the engine's).
	Model() string
	// Hold holds off its end (its end entry waits) until release is
	// called; false, holding nothing, once it has ended.
	Hold() (release func(), ok bool)
	// Stopped is done once it has ended.
	Stopped() context.Context
	// Done is closed once it has ended.
	Done() <-chan struct{}
	// Complete serves a model call it made (LLMGateway.Complete).
	Complete(req *opxv1.LLMRequest, stream opxv1.LLMGateway_CompleteServer) error
	// Expire makes its timeout fire now; Kill kills its process (the
	// rerun re-enacts a recorded timeout or crash with them).
	Expire()
	Kill()
}

var (
	subAgentsMu  sync.Mutex
	newSubAgents func() SubAgents
)

// UseSubAgents sets how each engine makes its set of sub-agents:
// engine/subagent calls it when it is linked in. Without it an engine
// has none, and refuses a configuration that enables them.
func UseSubAgents(f func() SubAgents) {
	subAgentsMu.Lock()
	newSubAgents = f
	subAgentsMu.Unlock()
}

// makeSubAgents returns a new set of sub-agents, or none.
func makeSubAgents(cfg AgentsConfig) (SubAgents, error) {
	subAgentsMu.Lock()
	f := newSubAgents
	subAgentsMu.Unlock()
	if f != nil {
		return f(), nil
	}
	if cfg.Enabled {
		return nil, fmt.Errorf("sub-agents are enabled (agents:), but this engine was built without them (engine/subagent)")
	}
	return noSubAgents{}, nil
}

// noSubAgents is an engine's set when none is linked in: no sub-agent is
// known, so each call that names one is blocked.
type noSubAgents struct{}

func (noSubAgents) Restrict(p judge.Proposal) *judge.Verdict {
	if p.SubAgentID == "" {
		return nil
	}
	return &judge.Verdict{Decision: event.Block, Tier: -1, Rule: "subagent:not-granted", Reason: "no sub-agent " + p.SubAgentID + " is known to this engine"}
}

func (noSubAgents) Admit(p judge.Proposal) (func(), string) {
	if p.SubAgentID == "" {
		return func() {}, ""
	}
	return nil, "no sub-agent " + p.SubAgentID + " is known to this engine"
}

func (noSubAgents) ExecScope(judge.Proposal) (context.Context, func()) { return nil, func() {} }
func (noSubAgents) ByToken(string) SubAgent                            { return nil }
func (noSubAgents) Get(string) SubAgent                                { return nil }
func (noSubAgents) Stop(string)                                        {}
func (noSubAgents) AgentTools() executor.Executor                      { return nil }
func (noSubAgents) Bind(*Engine)                                       {}
func (noSubAgents) Service() opxv1.SubAgentServiceServer {
	return opxv1.UnimplementedSubAgentServiceServer{}
}

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
