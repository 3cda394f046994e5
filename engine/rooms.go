package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/opx-dev/opx/engine/executor"
	"github.com/opx-dev/opx/engine/judge"
	"github.com/opx-dev/opx/engine/mcp"
	"github.com/opx-dev/opx/ledger/event"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"github.com/opx-dev/opx/replay/rerun"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// The rooms the core reaches through interfaces it owns. The rooms above
// it (engine/mcpproxy, engine/hooks, engine/redrive, engine/grpcapi, the
// fleet's shipper) import the engine; the core never imports them: each
// registers itself (Use...) or is handed to the engine by whoever starts
// it (Options), and without it the core runs with the no-op default
// below. Tier 2 and the MCP servers, below the core, are reached the
// same way (recorder.go: Tier2, engine/mcp: Servers); tier 2 records
// through the Recorder, and so do the fleet's shipper and the C2SP
// witnesses (engine/outward: Shipper, Witnesses).

// What the gRPC services of engine/grpcapi reach the engine through: the
// core never imports them (UseServices and Options.Services register
// them).

// ServiceRegistrar registers gRPC services on the engine's server, behind
// its authenticator and durable answers (Options.Services).
type ServiceRegistrar = func(srv *grpc.Server, e *Engine)

// linked is what a room above the core registers when its package is
// linked in (its init calls Use...), read by every engine New makes.
type linked[T any] struct {
	mu sync.Mutex
	v  T
}

func (l *linked[T]) set(v T) {
	l.mu.Lock()
	l.v = v
	l.mu.Unlock()
}

func (l *linked[T]) get() T {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.v
}

var coreServices linked[ServiceRegistrar]

// UseServices sets the services every engine serves whoever starts it,
// the client service and the LLM gateway: engine/grpcapi calls it when it
// is linked in. Without it an engine serves neither (a client or an
// agent is told Unimplemented).
func UseServices(f ServiceRegistrar) {
	coreServices.set(f)
}

// registerServices registers the services of UseServices on srv, if any.
func (e *Engine) registerServices(srv *grpc.Server) {
	if f := coreServices.get(); f != nil {
		f(srv, e)
	}
}

// What the core asks of the `opx mcp-proxy` sessions, and what it lends
// them. The sessions live in engine/mcpproxy, which imports the engine;
// the engine reaches them only through MCPProxies, made by the function
// engine/mcpproxy registers (UseMCPProxies) when it is linked in.

// MCPProxies is the engine's mcp-proxy sessions, as the core uses them:
// the pipeline's SessionTools (Tools), the engine's stop (Stop), the
// rerun of a recorded session (Replay) and its gRPC service.
type MCPProxies interface {
	// Tools is the registry of a proxy session's calls (its upstream's
	// tools: none before it starts or after it ends), nil for any other
	// session (Pipeline.SessionTools).
	Tools(session string) *executor.Registry
	// Stop ends every session (the engine stops) and opens no more.
	Stop(reason string)
	// Replay re-drives the recorded mcp-proxy session of the engine's
	// ReplayMode (engine/redrive).
	Replay(ctx context.Context)
	// Service serves McpProxyService on the engine's port.
	Service() opxv1.McpProxyServiceServer
	// Bind gives the set its engine, once New has made it.
	Bind(e *Engine)
}

var newMCPProxies linked[func() MCPProxies]

// UseMCPProxies sets how each engine makes its set of mcp-proxy sessions:
// engine/mcpproxy calls it when it is linked in. Without it an engine
// opens none, and a rerun of a proxy session fails.
func UseMCPProxies(f func() MCPProxies) {
	newMCPProxies.set(f)
}

// makeMCPProxies returns a new set of mcp-proxy sessions, or none.
func makeMCPProxies() MCPProxies {
	if f := newMCPProxies.get(); f != nil {
		return f()
	}
	return &noMCPProxies{}
}

// errNoMCPProxy says the engine was built without engine/mcpproxy.
var errNoMCPProxy = errors.New("this engine was built without mcp-proxy sessions (engine/mcpproxy)")

// noMCPProxies is an engine's set when none is linked in: no session
// opens, and no session has tools of its own.
type noMCPProxies struct {
	opxv1.UnimplementedMcpProxyServiceServer
	e *Engine
}

func (*noMCPProxies) Tools(string) *executor.Registry        { return nil }
func (*noMCPProxies) Stop(string)                            {}
func (p *noMCPProxies) Bind(e *Engine)                       { p.e = e }
func (p *noMCPProxies) Service() opxv1.McpProxyServiceServer { return p }

func (p *noMCPProxies) Replay(context.Context) {
	if r := p.e.opts.replay; r != nil {
		r.Fail(fmt.Errorf("rerun of mcp-proxy session %s: %w", r.Recording().Session, errNoMCPProxy))
	}
}

// Proxy refuses every stream.
func (*noMCPProxies) Proxy(opxv1.McpProxyService_ProxyServer) error {
	return status.Error(codes.FailedPrecondition, errNoMCPProxy.Error())
}

// What the core asks of the sessions of the coding agents audited through
// their hooks (engine/hooks), which import the engine: the engine reaches
// them only through Hooks, made by the function engine/hooks registers
// (UseHooks) when it is linked in.

// Hooks is the engine's hook sessions, as the core uses them.
type Hooks interface {
	// Bind gives the set its engine, once New has made it.
	Bind(e *Engine)
	// Register serves HookService on the engine's server.
	Register(srv *grpc.Server)
	// Recover runs once the engine's engine.started is recorded and
	// before it serves: it closes the calls a crashed engine left open
	// and records what hooks answered while no engine ran.
	Recover(ctx context.Context) error
	// Stop closes every open call and session (the engine stops; its
	// approvals are denied already) and opens no more; each end is
	// recorded before engine.stopped.
	Stop(reason string)
}

var newHooks linked[func() Hooks]

// UseHooks sets how each engine makes its hook sessions: engine/hooks
// calls it when it is linked in. Without it an engine serves no
// HookService (a hook is told Unimplemented, and fails closed).
func UseHooks(f func() Hooks) {
	newHooks.set(f)
}

// makeHooks returns a new set of hook sessions, or none.
func makeHooks() Hooks {
	if f := newHooks.get(); f != nil {
		return f()
	}
	return noHooks{}
}

// noHooks is an engine's set when none is linked in.
type noHooks struct{}

func (noHooks) Bind(*Engine)                  {}
func (noHooks) Register(*grpc.Server)         {}
func (noHooks) Recover(context.Context) error { return nil }
func (noHooks) Stop(string)                   {}

// ReplayMode is what an engine in replay mode asks of the driver that
// re-drives a recorded session (engine/redrive): the core owns this
// interface and never imports the driver, which NewReplay hands it.
// Everything the engine does in replay mode goes through it: the
// pipeline serves allowed calls from the record (Live, Execute,
// RecordedLinks), the MCP tools are the recorded listings (MCPTools,
// MCPWritable), Attach puts the engine New built into replay mode (the
// driver runs tier 2 on the recorded model and has approvals keep their
// recorded ids and answers: Approvals.Recorded), and Run starts Drive,
// which feeds the record and stops the engine.
type ReplayMode interface {
	// Recording is the session re-driven.
	Recording() *rerun.Recording
	// Attach gives the driver the engine New built, before it runs and
	// before it loads its sessions, to put it into replay mode.
	Attach(e *Engine)
	// Drive feeds the record to e, then stops e (StopReplay). Run calls
	// it in its own goroutine.
	Drive(ctx context.Context, e *Engine)
	// Live reports whether an allowed call runs for real rather than
	// being served from the record by Execute.
	Live(p judge.Proposal) bool
	// Execute stands in for the snapshot and executor of an allowed call.
	Execute(ctx context.Context, p *Pipeline, prop judge.Proposal, call executor.Call, def executor.ToolDef) (ToolOutcome, error)
	// Recorded is what was observed with the proposal p replays (links,
	// manifests' changes, sensitive reads, the session's taint), as
	// tool.proposed recorded it.
	Recorded(p judge.Proposal) judge.Observed
	// MCPTools and MCPWritable are the MCP servers' tools as the record
	// listed them for the message being fed.
	MCPTools() []mcp.Tool
	MCPWritable(server string) bool
	// OffRecord reports whether the replay left the record; OffRecordf
	// notes where it did; Fail ends the rerun with an error; Blobs reads
	// the named blobs from the record.
	OffRecord() bool
	OffRecordf(format string, args ...any)
	Fail(err error)
	Blobs(names ...string) [][]byte
}

// NewReplay returns an engine in replay mode: New's, with r re-driving
// the record.
func NewReplay(opts Options, r ReplayMode) (*Engine, error) {
	opts.replay = r
	return New(opts)
}

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

var newSubAgents linked[func() SubAgents]

// UseSubAgents sets how each engine makes its set of sub-agents:
// engine/subagent calls it when it is linked in. Without it an engine
// has none, and refuses a configuration that enables them.
func UseSubAgents(f func() SubAgents) {
	newSubAgents.set(f)
}

// makeSubAgents returns a new set of sub-agents, or none.
func makeSubAgents(cfg AgentsConfig) (SubAgents, error) {
	if f := newSubAgents.get(); f != nil {
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
