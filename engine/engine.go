package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"time"

	"github.com/opx-dev/opx/engine/auth"
	"github.com/opx-dev/opx/engine/broadcast"
	"github.com/opx-dev/opx/engine/executor"
	"github.com/opx-dev/opx/engine/judge"
	"github.com/opx-dev/opx/engine/mcp"
	"github.com/opx-dev/opx/engine/otr"
	"github.com/opx-dev/opx/engine/outward"
	"github.com/opx-dev/opx/engine/supervise"
	"github.com/opx-dev/opx/engine/tier2"
	"github.com/opx-dev/opx/engine/undo"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"github.com/opx-dev/opx/sandbox"
	"google.golang.org/grpc"
	"google.golang.org/grpc/reflection"
)

// Engine is a running engine.
type Engine struct {
	opts  Options
	rec   *Recorder
	pipe  *Pipeline
	chron *undo.Chronicle
	tools *executor.Registry
	// approvals are the escalations waiting for a human.
	approvals *Approvals
	// startedSeq is this engine's engine.started entry.
	startedSeq uint64
	// lastCheckpoint is the checkpoint load recorded (0: none), where
	// checkpointEvery counts from.
	lastCheckpoint uint64
	ws             *executor.Workspace
	bc             *broadcast.Broadcaster
	// subs are the sub-agents of this engine's life.
	subs SubAgents
	// mcp runs the configured MCP servers; nil without any.
	mcp mcp.Servers
	// proxies are the open `opx mcp-proxy` sessions.
	proxies MCPProxies
	// hooks are the sessions of the coding agents audited through their
	// hooks (engine/hooks).
	hooks Hooks
	// crashedSince and crashedHead are the run that ended without
	// engine.stopped, found at load (CrashedRun).
	crashedSince, crashedHead uint64
	// out ships the ledger and submits checkpoints to witnesses
	// (Options.Fleet, Options.Witnesses).
	out outward.Set

	mu         sync.Mutex
	srv        *grpc.Server // set by Run
	agentToken string       // of the agent process last spawned
	agent      *agentConn
	agentPID   int
	canary     *event.Canary
	inflight   map[string]*inflight // by message id
	msgN       uint64
	port       int
	started    time.Time
	stop       context.CancelCauseFunc
	running    context.Context // Run's context: done once the engine stops
	stopReason string          // what the client that stopped the engine said
	agentReady chan struct{}   // closed when an agent is accepted; replaced when it goes
	// streamsEnded is closed once Run has stopped the agent and the
	// sub-agents: their streams end then (StreamsEnded), so the server's
	// graceful stop need not wait for a peer that keeps one open.
	streamsEnded chan struct{}
	// agentCalls counts the agent's tool calls under way; callsIdle,
	// when set, is closed once none is (awaitCalls).
	agentCalls int
	callsIdle  chan struct{}

	rejectedAt         time.Time // last client.rejected recorded
	rejectedSuppressed int       // refusals since then not recorded

	canaryTargets sandbox.CanaryTargets
	// sandboxCaps is what this kernel offers the agents' sandbox, probed
	// once at start.
	sandboxCaps sandbox.Capabilities
	// agentRefused is set when an agent was killed for its sandbox: the
	// engine does not start another (a respawn would only fail again) and
	// says why to every client.
	agentRefused string
}

// ExitRestart is the engine's exit code when a client asked for a restart.
const ExitRestart = supervise.ExitRestart

// ErrRestart is returned by Run when a client asked for a restart.
var ErrRestart = errors.New("restart requested")

// New prepares an engine on an open ledger: it records engine.crashed if
// the previous engine died, then engine.started, and loads the sessions.
func New(opts Options) (*Engine, error) {
	if opts.ClientToken == "" || opts.Ledger == nil || opts.Provider == nil {
		return nil, errors.New("engine: ledger, provider and client token are required")
	}
	if opts.Evaluator == nil {
		opts.Evaluator = ReadOnlyPolicy{}
	}
	if opts.MaxToolCalls <= 0 {
		opts.MaxToolCalls = 50
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	if opts.Stdout == nil {
		opts.Stdout = io.Discard
	}
	if opts.CheckpointEntries == 0 {
		opts.CheckpointEntries = 1000
	}
	if opts.CheckpointInterval <= 0 {
		opts.CheckpointInterval = 10 * time.Second
	}
	if err := checkPolicyText(opts); err != nil {
		return nil, err
	}
	ws, err := executor.OpenWorkspace(opts.Workspace)
	if err != nil {
		return nil, err
	}
	if se, ok := opts.Evaluator.(judge.ShieldEvaluator); ok && se.FS == nil {
		// Shield judges paths as this workspace resolves them through
		// symlinks, as the executors then open them (judge/shield_links.go).
		se.FS = ws
		se.Declared = judge.NewDeclarations()
		opts.Evaluator = se
	}
	execs := []executor.Executor{executor.NewFiles(ws), executor.NewEdits(ws), executor.NewSearch(ws), executor.NewMemory(ws)}
	timeout := 2 * time.Minute
	if opts.Shell != nil {
		execs = append(execs, executor.NewShell(ws, *opts.Shell))
		// The pipeline's bound must not cut a command short of the
		// timeout it may ask for.
		timeout = max(timeout, cmp.Or(opts.Shell.MaxTimeout, executor.DefaultShellMaxTimeout)+30*time.Second)
	}
	if opts.Git != nil {
		execs = append(execs, executor.NewGit(ws, *opts.Git))
	}
	if opts.HTTP != nil {
		execs = append(execs, executor.NewHTTP(*opts.HTTP))
	}
	opts.Agents = opts.Agents.withDefaults()
	subs, err := makeSubAgents(opts.Agents)
	if err != nil {
		ws.Close()
		return nil, err
	}
	if opts.Agents.Enabled {
		execs = append(execs, subs.AgentTools())
		// agent_result waits up to a sub-agent's timeout.
		timeout = max(timeout, opts.Agents.Timeout+30*time.Second)
	}
	tools, err := executor.NewRegistry(execs...)
	if err != nil {
		ws.Close()
		return nil, err
	}
	mcpSource := &mcp.Source{List: func() []mcp.Tool { return nil }, Writable: func(string) bool { return false }}
	if err := tools.AddDynamic(mcp.ToolPrefix, mcpSource); err != nil {
		ws.Close()
		return nil, err
	}
	if opts.MCP != nil {
		for _, s := range opts.MCP.Specs {
			// The pipeline's bound must not cut a call short of the
			// server's own timeout.
			timeout = max(timeout, cmp.Or(s.Timeout, mcp.DefaultTimeout)+30*time.Second)
		}
	}
	e := &Engine{opts: opts, rec: NewRecorder(opts.Ledger), tools: tools, ws: ws, bc: broadcast.New(opts.Ledger),
		inflight: map[string]*inflight{}, agentReady: make(chan struct{}), streamsEnded: make(chan struct{}), started: time.Now(), subs: subs,
		proxies: makeMCPProxies(), hooks: makeHooks(), sandboxCaps: sandbox.New().Probe()}
	subs.Bind(e)
	e.proxies.Bind(e)
	e.hooks.Bind(e)
	if opts.MCP != nil && len(opts.MCP.Specs) > 0 && opts.replay == nil {
		e.mcp = mcp.NewManager(opts.MCP.Sandbox, opts.MCP.Specs, e.mcpRecorder())
	}
	if e.mcp != nil {
		mcpSource.List, mcpSource.Call = e.mcp.Tools, e.mcp.Call
		mcpSource.Writable = func(server string) bool {
			s, ok := e.mcp.Spec(server)
			return ok && s.Writable
		}
	}
	e.rec.otr.SetKnown(e.otrKnown())
	e.approvals = NewApprovals(e.rec, opts.ApprovalTimeout, e.publish)
	e.chron = undo.NewChronicle(undo.WorkspaceFS(ws), e.rec, opts.Retention)
	e.chron.SetLogf(opts.Logf)
	if opts.SnapshotExclude != nil {
		e.chron.SetExclude(opts.SnapshotExclude)
	}
	if opts.Protected != nil {
		e.chron.SetProtected(opts.Protected)
	}
	e.pipe = &Pipeline{Recorder: e.rec, Tools: tools, Evaluator: opts.Evaluator, Chronicle: e.chron, Timeout: timeout,
		OnVerdict: func(session, messageID string, seq uint64, v *event.ShieldVerdict) {
			e.publish(session, messageID, "verdict", seq, v)
		}, Approvals: e.approvals, Restrict: e.restrict, Admit: e.subs.Admit,
		ExecScope: e.subs.ExecScope, SessionTools: e.proxies.Tools, Taint: e.readTaint}
	if opts.Telemetry != nil {
		e.pipe.TraceContext = e.mcpTraceContext
	}
	if opts.Tier2Provider != nil {
		t2, err := tier2.NewLLMEvaluator(tier2.LLMEvaluatorConfig{Recorder: e.rec, Provider: opts.Tier2Provider, Retry: opts.Retry,
			Budget: opts.Tier2DailyBudget, Workspace: opts.Workspace})
		if err != nil {
			ws.Close()
			return nil, err
		}
		e.pipe.Tier2 = t2
	}
	// Replay mode (rooms.go: ReplayMode): no MCP server runs, the tools
	// are the recorded listings, and the driver (engine/redrive) sets up
	// the rest (Attach).
	if s := opts.replay; s != nil {
		e.pipe.replay = s
		mcpSource.List, mcpSource.Writable, mcpSource.Call = s.MCPTools, s.MCPWritable, nil
		s.Attach(e)
	}
	if err := e.load(); err != nil {
		ws.Close()
		return nil, err
	}
	if opts.replay == nil {
		if err := e.hooks.Recover(context.Background()); err != nil {
			ws.Close()
			return nil, err
		}
	}
	return e, nil
}

// restrict is the pipeline's Restrict: what no tier may allow here.
func (e *Engine) restrict(p judge.Proposal) *judge.Verdict {
	if v := e.subs.Restrict(p); v != nil {
		return v
	}
	return e.rec.otr.Restrict(p)
}

// Run serves until ctx ends, a client asks for a shutdown (nil) or a
// restart (ErrRestart), or the ledger fails.
func (e *Engine) Run(ctx context.Context) error {
	defer e.ws.Close()
	defer e.bc.Close()
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	e.mu.Lock()
	e.stop, e.running = stop, ctx
	e.mu.Unlock()

	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	e.port = lis.Addr().(*net.TCPAddr).Port
	srv := e.newServer()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	fmt.Fprintf(e.opts.Stdout, "PORT:%d\nWEB_DISABLED\n", e.port)
	e.opts.Logf("engine: gRPC on 127.0.0.1:%d, ledger %s", e.port, e.opts.Ledger.Path())

	agentDone := make(chan error, 1)
	agentRunning := e.opts.SpawnAgent != nil
	if agentRunning {
		targets, cleanup, err := sandbox.PlantCanaryTargets(e.opts.RunDir, e.opts.Logf)
		if err != nil {
			return fmt.Errorf("canary targets: %w", err)
		}
		defer cleanup()
		e.canaryTargets = targets
		go func() { agentDone <- e.superviseAgent(ctx) }()
	}
	if e.mcp != nil {
		// In the background: the engine serves at once, and a server that
		// will not start is recorded and reported, never waited for.
		e.mcp.Start(ctx)
	}
	if e.opts.replay != nil {
		go e.opts.replay.Drive(ctx, e) // feeds the recorded messages, then stops the engine
	}
	fleetErr, witnessErr := e.out.Start(ctx, e.opts.Fleet, e.opts.Witnesses, func(ctx context.Context, p event.Payload) error {
		_, err := e.rec.Record(ctx, ledger.Sync, "", p)
		return err
	})
	if fleetErr != nil {
		e.opts.Logf("engine: fleet: %v (not shipping)", fleetErr)
	}
	if witnessErr != nil {
		e.opts.Logf("engine: witnesses: %v (not submitting checkpoints)", witnessErr)
	}
	if err := e.out.StartTelemetry(ctx, e.opts.Telemetry); err != nil {
		e.opts.Logf("engine: telemetry: %v (not exporting)", err)
	}
	everyDone := make(chan struct{})
	go func() {
		defer close(everyDone)
		e.checkpointEvery(ctx, e.opts.CheckpointInterval, e.opts.CheckpointEntries)
	}()

	var result error
	select {
	case <-ctx.Done():
		result = stopResult(ctx)
	case err := <-served:
		result = fmt.Errorf("grpc server: %w", err)
	case err := <-agentDone:
		agentRunning = false
		if errors.Is(err, errAgentRefused) {
			// Serve on without an agent: clients are told why, and the
			// record is there to read. A respawn loop would prove nothing.
			select {
			case <-ctx.Done():
				result = stopResult(ctx)
			case err := <-served:
				result = fmt.Errorf("grpc server: %w", err)
			}
		} else {
			result = fmt.Errorf("agent: %w", err)
		}
	}
	e.mu.Lock()
	reason := e.stopReason
	e.mu.Unlock()
	if reason == "" {
		reason = "stopped"
	}
	cause := event.StopShutdown
	switch c := context.Cause(ctx); {
	case errors.Is(c, ErrRestart):
		reason, result, cause = "restart requested: "+reason, ErrRestart, event.StopRestart
	case result != nil:
		reason, cause = result.Error(), event.StopError
	case errors.Is(c, ErrManagerGone):
		reason, cause = c.Error(), event.StopManagerGone
	case errors.Is(c, ErrSignalled):
		reason, cause = c.Error(), event.StopSignal
	}
	stop(errShutdown)
	// Before anything else stops: sub-agents end (engine_stopped, their
	// processes killed and waited for, their approvals denied), then the
	// other denials and their verdicts are recorded, all before
	// engine.stopped.
	e.subs.Stop(reason)
	e.proxies.Stop(reason)
	e.approvals.DenyAll("the engine stopped before anyone answered ("+reason+")", 5*time.Second)
	e.hooks.Stop(reason)
	e.failInflight("engine stopping: " + reason)
	e.shutdownAgent(reason)
	if agentRunning {
		// The supervisor stops the agent (SIGTERM, then SIGKILL) now that
		// ctx is done; wait for it so no agent outlives its engine.
		select {
		case <-agentDone:
		case <-time.After(10 * time.Second):
		}
	}
	// The results of the agent's calls under way are delivered (bounded,
	// as the graceful stop was), then the engine ends the agents'
	// streams, so the graceful stop waits for no peer that keeps one open.
	e.awaitCalls(2 * time.Second)
	close(e.streamsEnded)
	gracefulStop(srv, 2*time.Second)
	if e.mcp != nil {
		// Each server's end recorded ("stopped") before engine.stopped.
		mctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		e.mcp.Stop(mctx)
		cancel()
	}
	// ctx is done: once the periodic checkpoint (if one was under way) is
	// over, the checkpoint at stop is the last one recorded and published.
	<-everyDone
	e.checkpoint()
	if _, err := e.rec.Record(context.Background(), ledger.Sync, "", &event.EngineStopped{Reason: reason, Cause: cause,
		UptimeMS: time.Since(e.started).Milliseconds()}); err != nil && result == nil {
		result = err
	}
	e.out.Stop(e.opts.Logf)
	return result
}

var errShutdown = errors.New("shutdown requested")

// stopResult is what Run returns for a ctx that ended: nil for the
// orderly causes (a client's shutdown, a plain cancel, a signal, the
// manager's death), the cause otherwise (a restart, a ledger failure).
func stopResult(ctx context.Context) error {
	c := context.Cause(ctx)
	for _, orderly := range []error{errShutdown, context.Canceled, ErrManagerGone, ErrSignalled} {
		if errors.Is(c, orderly) {
			return nil
		}
	}
	return c
}

// Bounds on what any caller may send, checked by gRPC before a handler or
// the authenticator runs.
const (
	// maxMessageBytes bounds any gRPC message the engine accepts.
	maxMessageBytes = 4 << 20
	// maxHeaderBytes bounds a call's metadata (gRPC's default is 16 MiB;
	// opx's headers are a token and a client name).
	maxHeaderBytes = 16 << 10
)

// newServer builds the gRPC server with every service on the engine's
// port behind one authenticator (engine/auth); a client's unary answer then
// waits until what it may name is durable (auth.go: durableAnswer).
func (e *Engine) newServer() *grpc.Server {
	a := &auth.Authenticator{Client: e.opts.ClientToken, Rejected: e.recordRejection, Agent: e.AgentToken, SubAgent: func(tok string) bool { return e.subs.ByToken(tok) != nil }}
	srv := grpc.NewServer(
		grpc.MaxRecvMsgSize(maxMessageBytes), grpc.MaxHeaderListSize(maxHeaderBytes),
		grpc.ChainUnaryInterceptor(a.Unary, e.durableAnswer), grpc.StreamInterceptor(a.Stream))
	opxv1.RegisterAgentServiceServer(srv, &agentService{e: e})
	opxv1.RegisterSubAgentServiceServer(srv, e.subs.Service())
	e.registerServices(srv) // the LLM gateway and ClientService (engine/grpcapi)
	if e.opts.Services != nil {
		e.opts.Services(srv, e)
	}
	opxv1.RegisterMcpProxyServiceServer(srv, e.proxies.Service())
	e.hooks.Register(srv)
	reflection.Register(srv)
	e.mu.Lock()
	e.srv = srv
	e.mu.Unlock()
	return srv
}

func gracefulStop(srv *grpc.Server, d time.Duration) {
	done := make(chan struct{})
	go func() { srv.GracefulStop(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
		srv.Stop()
	}
}

// fatal stops the engine because the ledger failed.
func (e *Engine) fatal(err error) {
	e.opts.Logf("engine: ledger failure, stopping: %v", err)
	e.mu.Lock()
	stop := e.stop
	e.mu.Unlock()
	if stop != nil {
		stop(fmt.Errorf("ledger failure: %w", err))
	}
}

// record records and stops the engine if the ledger failed.
func (e *Engine) record(ctx context.Context, d ledger.Durability, session string, p event.Payload, blobs ...[]byte) uint64 {
	seq, err := e.rec.Record(context.WithoutCancel(ctx), d, session, p, blobs...)
	if err != nil {
		e.fatal(err)
	}
	return seq
}

// pid of this process, for status.
var pid = os.Getpid()

// otrKnown is what the engine knows of the names it records (otr.Known):
// its registered tools and their groups, and the models engine.started
// names (its provider's and the tier 2 evaluator's).
func (e *Engine) otrKnown() event.Known {
	models := []string{e.opts.Provider.Model()}
	if t2 := e.opts.Tier2Provider; t2 != nil {
		models = append(models, t2.Model())
	}
	return otr.Known(e.tools, models...)
}
