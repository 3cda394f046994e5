package engine

import (
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
	"github.com/opx-dev/opx/replay/projection"
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

// RecordFromSub records a payload built from sub-agent subagent's input:
// one that does not validate is recorded as an agent.error instead.
func (e *Engine) RecordFromSub(ctx context.Context, d ledger.Durability, session, subagent string, p event.Payload, blobs ...[]byte) uint64 {
	return e.recordFromSub(ctx, d, session, subagent, p, blobs...)
}

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

// CompleteModelCall makes one model call of sub-agent s for session,
// recording the request before and the response after (the gateway's).
func (e *Engine) CompleteModelCall(s SubAgent, session string, req *opxv1.LLMRequest, stream opxv1.LLMGateway_CompleteServer) error {
	return (&gateway{e: e}).complete(s, session, req, stream)
}

// The engine's helpers the sub-agents use alike.

// TokenEqual compares tokens in constant time.
func TokenEqual(a, b string) bool { return tokenEqual(a, b) }

// MetadataValue returns a call's metadata value for key.
func MetadataValue(ctx context.Context, key string) string { return metadataValue(ctx, key) }
