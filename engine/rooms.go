package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/opx-dev/opx/engine/agentwire"
	"github.com/opx-dev/opx/engine/executor"
	"github.com/opx-dev/opx/engine/judge"
	"github.com/opx-dev/opx/engine/llm"
	"github.com/opx-dev/opx/engine/mcp"
	"github.com/opx-dev/opx/engine/tier2"
	"github.com/opx-dev/opx/internal/textclip"
	"github.com/opx-dev/opx/ledger"
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
// same way (Tier2, MCPServers); tier 2 records through the Recorder. The
// sub-agents' interfaces are in subagents.go.

// What the gRPC services of engine/grpcapi reach the engine through: the
// core never imports them (UseServices and Options.Services register
// them).

// ServiceRegistrar registers gRPC services on the engine's server, behind
// its authenticator and durable answers (Options.Services).
type ServiceRegistrar = func(srv *grpc.Server, e *Engine)

var (
	servicesMu   sync.Mutex
	coreServices ServiceRegistrar
)

// UseServices sets the services every engine serves whoever starts it,
// the client service and the LLM gateway: engine/grpcapi calls it when it
// is linked in. Without it an engine serves neither (a client or an
// agent is told Unimplemented).
func UseServices(f ServiceRegistrar) {
	servicesMu.Lock()
	coreServices = f
	servicesMu.Unlock()
}

// registerServices registers the services of UseServices on srv, if any.
func (e *Engine) registerServices(srv *grpc.Server) {
	servicesMu.Lock()
	f := coreServices
	servicesMu.Unlock()
	if f != nil {
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

var (
	proxiesMu     sync.Mutex
	newMCPProxies func() MCPProxies
)

// UseMCPProxies sets how each engine makes its set of mcp-proxy sessions:
// engine/mcpproxy calls it when it is linked in. Without it an engine
// opens none, and a rerun of a proxy session fails.
func UseMCPProxies(f func() MCPProxies) {
	proxiesMu.Lock()
	newMCPProxies = f
	proxiesMu.Unlock()
}

// makeMCPProxies returns a new set of mcp-proxy sessions, or none.
func makeMCPProxies() MCPProxies {
	proxiesMu.Lock()
	f := newMCPProxies
	proxiesMu.Unlock()
	if f != nil {
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

var (
	hooksMu  sync.Mutex
	newHooks func() Hooks
)

// UseHooks sets how each engine makes its hook sessions: engine/hooks
// calls it when it is linked in. Without it an engine serves no
// HookService (a hook is told Unimplemented, and fails closed).
func UseHooks(f func() Hooks) {
	hooksMu.Lock()
	newHooks = f
	hooksMu.Unlock()
}

// makeHooks returns a new set of hook sessions, or none.
func makeHooks() Hooks {
	hooksMu.Lock()
	f := newHooks
	hooksMu.Unlock()
	if f != nil {
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

// Shipper ships the ledger to a fleet while the engine runs (fleet/ship).
// The engine owns this interface so that it never imports the fleet,
// whose collector imports the engine's packages: the shipper is started
// by whoever starts the engine (Options.Fleet), and the engine only asks
// where it stands and stops it.
type Shipper interface {
	// Status is where shipping stands, for GetStatus.
	Status() *opxv1.FleetStatus
	// Close ships what it can within drain, then stops.
	Close(drain time.Duration) error
}

// CosignRecorder records in the ledger a witness's cosignature the
// shipper accepted (the shipper never writes entries itself).
type CosignRecorder interface {
	RecordCosigned(ctx context.Context, c *event.Cosigned) error
}

// StartShipper starts shipping the ledger in the background, recording
// the cosignatures it accepts with rec. It must not block on the fleet:
// NATS being down is only a state Status shows.
type StartShipper func(ctx context.Context, rec CosignRecorder) (Shipper, error)

// fleetDrain bounds how long a stopping engine waits for its last
// entries (engine.stopped among them) to be shipped; whatever is left is
// shipped from the cursor at the next start.
const fleetDrain = 3 * time.Second

// startFleet starts shipping the ledger (Options.Fleet) in the
// background: it never blocks the engine, and NATS being down is only a
// state shown by status.
func (e *Engine) startFleet(ctx context.Context) error {
	if e.opts.Fleet == nil {
		return nil
	}
	s, err := e.opts.Fleet(context.WithoutCancel(ctx), cosignRecorder{e})
	if err != nil {
		return err
	}
	e.mu.Lock()
	e.shipper = s
	e.mu.Unlock()
	return nil
}

// stopFleet ships what it can within fleetDrain, then stops.
func (e *Engine) stopFleet() {
	e.mu.Lock()
	s := e.shipper
	e.mu.Unlock()
	if s == nil {
		return
	}
	if err := s.Close(fleetDrain); err != nil {
		e.opts.Logf("engine: fleet: %v", err)
	}
}

// cosignRecorder records the witness's cosignatures the shipper accepted.
type cosignRecorder struct{ e *Engine }

func (r cosignRecorder) RecordCosigned(ctx context.Context, c *event.Cosigned) error {
	_, err := r.e.rec.Record(ctx, ledger.Sync, "", c)
	return err
}

// fleetStatusProto is the shipping state for GetStatus (nil when off).
func (e *Engine) fleetStatusProto() *opxv1.FleetStatus {
	e.mu.Lock()
	s := e.shipper
	e.mu.Unlock()
	if s == nil {
		return nil
	}
	return s.Status()
}

// Tier 2 (the model asked about escalations) lives in engine/tier2,
// below the core: the engine builds it (New, setupReplay) and asks it
// through Tier2; it records through the engine's Recorder.

// Tier2 answers escalations to tier 2 (tier2.LLMEvaluator).
type Tier2 interface {
	// Judge returns an allow or block verdict (tier 2) on p, which esc
	// escalated. The error is non-nil only when the ledger failed.
	Judge(ctx context.Context, p judge.Proposal, esc judge.Verdict) (judge.Verdict, error)
}

var _ tier2.Recorder = (*Recorder)(nil)

// RecordLLMResponse records the llm.response of one exchange the way the
// gateway records its own (agentwire.LLMResponse): tier 2's, through
// tier2.Recorder.
func (r *Recorder) RecordLLMResponse(ctx context.Context, d ledger.Durability, session string, p llm.Provider, subagent, reqID string, x *llm.Exchange, callErr error) (uint64, error) {
	resp, blobs := agentwire.LLMResponse(p, subagent, reqID, x, callErr)
	return r.Record(ctx, d, session, resp, blobs...)
}

// ReplayMode is what an engine in replay mode asks of the driver that
// re-drives a recorded session (engine/redrive): the core owns this
// interface and never imports the driver, which NewReplay hands it.
// Everything the engine does in replay mode goes through it: the
// pipeline serves allowed calls from the record (Live, Execute,
// RecordedLinks), approvals keep their recorded ids and answers
// (ApprovalID, Answer), the MCP tools are the recorded listings
// (MCPTools, MCPWritable), tier 2 runs on the recorded model (Tier2), and
// Run starts Drive, which feeds the record and stops the engine.
type ReplayMode interface {
	// Recording is the session re-driven.
	Recording() *rerun.Recording
	// Attach gives the driver the engine New built, before it runs.
	Attach(e *Engine)
	// Drive feeds the record to e, then stops e (StopReplay). Run calls
	// it in its own goroutine.
	Drive(ctx context.Context, e *Engine)
	// Live reports whether an allowed call runs for real rather than
	// being served from the record by Execute.
	Live(p judge.Proposal) bool
	// Execute stands in for the snapshot and executor of an allowed call.
	Execute(ctx context.Context, p *Pipeline, prop judge.Proposal, call executor.Call, def executor.ToolDef) (ToolOutcome, error)
	// RecordedLinks are the links recorded with the proposal p replays.
	RecordedLinks(p judge.Proposal) map[string]string
	// ApprovalID names a new approval as the record named it; Answer
	// resolves it as the record answered it.
	ApprovalID(p judge.Proposal) string
	Answer(a *Approvals, id string)
	// MCPTools and MCPWritable are the MCP servers' tools as the record
	// listed them for the message being fed.
	MCPTools() []mcp.Tool
	MCPWritable(server string) bool
	// Tier2 is the recorded tier 2 model (nil: none), its daily budget
	// and the recorded workspace it is shown.
	Tier2() (provider llm.Provider, budget int, workspace string)
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

// setupReplay puts an engine New is building into replay mode.
func (e *Engine) setupReplay(mcpSource *mcp.Source) {
	s := e.opts.replay
	e.pipe.replay = s
	// MCP tools in replay mode: no server runs (engine/redrive).
	mcpSource.List = s.MCPTools
	mcpSource.Writable = s.MCPWritable
	mcpSource.Call = nil
	s.Attach(e)
	if provider, budget, workspace := s.Tier2(); provider != nil {
		// Built here, not by New: the evaluator shows the model the
		// recorded workspace, not the replay's empty one.
		t2, err := tier2.NewLLMEvaluator(tier2.LLMEvaluatorConfig{Recorder: e.rec, Provider: provider, Retry: e.opts.Retry,
			Budget: budget, Workspace: workspace})
		if err == nil {
			e.pipe.Tier2 = t2
		}
	}
	// Approvals keep their recorded ids (the id is in the answer the
	// agent reads, so in the next request body) and are answered as
	// recorded, the moment they are asked.
	e.approvals.id = s.ApprovalID
	publish := e.approvals.publish
	e.approvals.publish = func(session, messageID, typ string, seq uint64, data any) {
		if publish != nil {
			publish(session, messageID, typ, seq, data)
		}
		if m, ok := data.(map[string]any); ok && typ == "approval_requested" {
			id, _ := m["approval_id"].(string)
			s.Answer(e.approvals, id)
		}
	}
}

// driveReplay hands the running engine to the driver (ReplayMode.Drive).
func (e *Engine) driveReplay(ctx context.Context) {
	e.opts.replay.Drive(ctx, e)
}

// MCP servers for opx's own agent (docs/mcp.md): the servers of the
// configuration's mcp.servers run under an mcp.Manager the engine starts
// with itself and stops before engine.stopped; their tools are a dynamic
// source of the executor registry (mcp.Source), so the agent is offered
// what the servers offer at each message, named mcp__<server>__<tool> in
// the group mcp:<server>. A call of one is a proposal like any other.

// MCPServers is what the engine uses of an mcp.Manager.
type MCPServers interface {
	// Start starts every server in the background and returns at once.
	Start(ctx context.Context)
	// WaitStarted returns once each server started or failed at least once.
	WaitStarted(ctx context.Context) error
	// Tools are every running server's tools, sorted by name.
	Tools() []mcp.Tool
	// Call calls a tool by its namespaced name.
	Call(ctx context.Context, callID, name string, args json.RawMessage) (mcp.Result, error)
	// Spec is a configured server's.
	Spec(server string) (mcp.Spec, bool)
	// Status is each configured server's state, sorted by name.
	Status() []mcp.ServerStatus
	// Stop ends every server and records their exits.
	Stop(ctx context.Context)
}

// mcpRecorder is the Recorder the engine's servers record through: a
// ledger failure stops the engine, as any of its own.
func (e *Engine) mcpRecorder() mcp.Recorder {
	return func(ctx context.Context, d ledger.Durability, session string, p event.Payload, blobs ...[]byte) error {
		_, err := e.rec.Record(context.WithoutCancel(ctx), d, session, p, blobs...)
		if err != nil {
			e.fatal(err)
		}
		return err
	}
}

// mcpStatusProto is the state of every configured server, sorted by
// name: the running engine's servers as its manager has them, and the
// disabled ones.
func (e *Engine) mcpStatusProto() []*opxv1.McpServerStatus {
	cfg := e.opts.MCP
	if cfg == nil {
		return nil
	}
	var out []*opxv1.McpServerStatus
	if e.mcp != nil {
		for _, s := range e.mcp.Status() {
			p := &opxv1.McpServerStatus{Name: s.Name, State: s.State, Pid: int64(s.PID), Instance: int64(s.Instance), Tools: int64(s.Tools),
				Restarts: int64(s.Restarts), LastError: textclip.Cut(strings.ToValidUTF8(s.LastError, "\uFFFD"), 1024)}
			if !s.Since.IsZero() {
				p.Since = s.Since.UTC().Format(time.RFC3339)
			}
			if spec, ok := e.mcp.Spec(s.Name); ok {
				p.Writable, p.Network = spec.Writable, spec.Network
			}
			out = append(out, p)
		}
	}
	for _, name := range cfg.Disabled {
		out = append(out, &opxv1.McpServerStatus{Name: name, State: "disabled"})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// waitMCP waits (bounded) until every server started or failed once, so a
// message's agent is offered their tools.
func (e *Engine) waitMCP(ctx context.Context) {
	if e.mcp == nil {
		return
	}
	d := e.opts.MCP.StartTimeout
	if d <= 0 {
		d = 2 * time.Minute
	}
	wctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	if err := e.mcp.WaitStarted(wctx); err != nil {
		e.opts.Logf("engine: MCP servers not all started: %v", err)
	}
}

// newMCPManager builds the Manager of the engine's servers.
var newMCPManager = func(sb mcp.Sandbox, specs []mcp.Spec, rec mcp.Recorder) MCPServers {
	return mcp.NewManager(sb, specs, rec)
}
