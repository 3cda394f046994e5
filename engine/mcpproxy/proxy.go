package mcpproxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/engine/auth"
	"github.com/opx-dev/opx/engine/config"
	"github.com/opx-dev/opx/engine/executor"
	"github.com/opx-dev/opx/engine/mcp"
	"github.com/opx-dev/opx/internal/textclip"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// An `opx mcp-proxy` session (docs/mcp-proxy.md) puts the engine between an MCP
// client and an upstream MCP server. The proxy process speaks MCP on its
// stdio and holds one McpProxyService.Proxy stream to the engine; the
// engine holds the session:
//
//   - session.created (mode mcp-proxy), then mcp.client (the client as it
//     introduced itself, and the upstream), then the upstream's
//     mcp.server_started and mcp.tools_listed: the upstream is started by
//     the engine, sandboxed (mcp.Start), for this session only.
//   - Each tools/call is recorded as the client sent it (mcp.request, its
//     request_id the call id), then goes through the tool pipeline like a
//     call of opx's own agent (tool.proposed, shield.verdict, approvals,
//     a workspace snapshot when the upstream is writable, exec.started,
//     exec.completed), the session's registry (Pipeline.SessionTools)
//     holding the upstream's tools; what the client got back is recorded
//     last (mcp.response): the upstream's CallToolResult as received, or
//     an MCP tool error saying why the call did not run. The call's
//     result is durable before the client hears it (exec.completed); the
//     answer to a call that did not run is (mcp.response, Sync).
//   - A client's cancellation (ProxyCancel) denies the approval its call
//     waits for; the upstream's tool changes are told to the proxy
//     (tools_changed), and through it to the client.
//   - Every other request (tools/list, resources/*, prompts/*,
//     completion/complete) is recorded (mcp.request), answered (tools/list
//     from the tools the session holds, the rest by the upstream) and the
//     answer recorded (mcp.response).
//   - The session ends with its stream (the client left, the engine
//     stops): the approvals it waits for are denied, the upstream is
//     stopped, and its end recorded (mcp.server_exited, no restart). An
//     upstream that exits on its own ends the session's calls the same
//     way: it is not restarted (the client can start another proxy).

// Bounds on what a proxy may ask.
const (
	// proxyMaxInFlight bounds the requests of one session being answered
	// at once; a request over it is refused at once, unrecorded.
	proxyMaxInFlight = 16
	// defaultMaxProxySessions bounds the sessions open at once when the
	// configuration does not (mcp.Config.MaxProxySessions).
	defaultMaxProxySessions = 32
	// proxyMaxResult bounds an answer handed to a proxy (gRPC's message
	// limit is above it): a passed-through answer over it is refused, a
	// tool result over it is handed on as its text (capped).
	proxyMaxResult = 4 << 20
	// proxyMaxArgv and proxyMaxArg bound an upstream's command line.
	proxyMaxArgv = 256
	proxyMaxArg  = 4096
	// proxyMaxEnv bounds the variables a proxy passes to its upstream.
	proxyMaxEnv = 64
	// proxyEndWait bounds how long a session's end waits for its calls in
	// flight (their approvals are denied and their upstream stopped, so
	// they end promptly).
	proxyEndWait = 10 * time.Second
)

// proxySessions are the engine's open mcp-proxy sessions: its
// engine.MCPProxies.
type proxySessions struct {
	e      *engine.Engine
	mu     sync.Mutex
	byID   map[string]*proxySession
	gone   map[string]bool // sessions ended: no tools at all, ever
	closed string          // why no session opens any more; "" while the engine runs
}

func newProxySessions() *proxySessions {
	return &proxySessions{byID: map[string]*proxySession{}, gone: map[string]bool{}}
}

// Tools is the pipeline's SessionTools: a proxy session's registry.
func (p *proxySessions) Tools(session string) *executor.Registry {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ps := p.byID[session]; ps != nil {
		if ps.reg == nil {
			// Its upstream has not started: no tool at all, never the
			// engine's own (review #4).
			return emptyRegistry
		}
		return ps.reg
	}
	if p.gone[session] {
		// Ended: a call still on its way (its end stopped waiting for
		// it) reaches nothing, never the engine's own tools (review #4).
		return emptyRegistry
	}
	return nil
}

// emptyRegistry defines no tool.
var emptyRegistry, _ = executor.NewRegistry()

// proxySession is one open mcp-proxy session.
type proxySession struct {
	e        *engine.Engine
	p        *proxySessions // the engine's sessions
	id       string
	upstream string // the server's name: configured, or "upstream"
	client   string // the client's name, for the approvals it answers
	writable bool   // the upstream may change the workspace
	home     string // a `-- COMMAND` upstream's private home root, removed at the end
	conn     *mcp.Conn
	reg      *executor.Registry // the upstream's tools

	inFlight sync.WaitGroup // requests being answered
	slots    chan struct{}  // proxyMaxInFlight

	reqMu  sync.Mutex // names and records requests in one order
	nCalls int        // tools/call requests so far
	nReqs  int        // other requests so far

	mu      sync.Mutex
	results map[string]mcp.Result // executed calls' results, by call id, until their handler takes them
	asked   map[string]string     // approval ids this session's calls asked for: their call ids
	// calls maps the proxy's ids of the tools/call requests being
	// answered to their call ids; cancelled are the proxy's ids the
	// client cancelled, and the call ids they named.
	calls     map[uint64]string
	cancelled map[string]bool
	ended     string        // why the session ended; "" while open
	exitRec   bool          // the upstream's end is recorded
	endDone   chan struct{} // closed once the end is recorded
	// toolsChanged holds a signal when the upstream's tools changed.
	toolsChanged chan struct{}
}

// openProxy records a new session for open and starts its upstream. The
// error is a gRPC status for the proxy.
func (p *proxySessions) openProxy(ctx context.Context, open *opxv1.ProxyOpen) (*proxySession, error) {
	e := p.e
	opts := e.Options()
	if opts.MCP == nil || e.Replaying() != nil {
		return nil, status.Error(codes.FailedPrecondition, "this engine runs no MCP servers (no MCP sandbox configured)")
	}
	spec, err := proxySpec(opts, open)
	if err == nil {
		spec.Env, err = proxyEnv(spec.Env, open.Env)
	}
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	client := proxyClient(open, spec)
	tok, err := auth.NewToken()
	if err != nil {
		return nil, status.Errorf(codes.Internal, "%v", err)
	}
	ps := &proxySession{e: e, p: p, id: "ses_" + tok[:16], upstream: spec.Name, client: client.ClientName, writable: spec.Writable,
		slots: make(chan struct{}, proxyMaxInFlight), results: map[string]mcp.Result{}, asked: map[string]string{}, calls: map[uint64]string{}, cancelled: map[string]bool{}, endDone: make(chan struct{}),
		toolsChanged: make(chan struct{}, 1)}
	limit := opts.MCP.MaxProxySessions
	if limit <= 0 {
		limit = defaultMaxProxySessions
	}
	p.mu.Lock()
	closed, n := p.closed, len(p.byID)
	if closed == "" && n < limit {
		p.byID[ps.id] = ps
	}
	p.mu.Unlock()
	if closed != "" {
		return nil, status.Errorf(codes.Unavailable, "the engine is stopping: %s", closed)
	}
	if n >= limit {
		// Each session runs its own sandboxed upstream: a client token
		// must not start them without end (review #13). Nothing is
		// recorded: a flood of refusals would fill the ledger instead.
		return nil, status.Errorf(codes.ResourceExhausted, "%d MCP proxy sessions are open, the most this engine takes (mcp.max_proxy_sessions): close one first", n)
	}
	rctx := context.WithoutCancel(ctx)
	title := textclip.Cut(fmt.Sprintf("%s → %s", clientLabel(client), spec.Name), 120)
	e.Record(rctx, ledger.Async, ps.id, &event.SessionCreated{Mode: ModeMCPProxy, Title: title})
	e.Record(rctx, ledger.Async, ps.id, client)
	// A listing after the first says the upstream's tools changed: the
	// proxy tells its client (notifications/tools/list_changed).
	base := e.MCPRecorder()
	var listings atomic.Int32
	rec := func(ctx context.Context, d ledger.Durability, session string, p event.Payload, blobs ...[]byte) error {
		err := base(ctx, d, session, p, blobs...)
		if _, ok := p.(*event.MCPToolsListed); ok {
			if listings.Add(1) > 1 {
				select {
				case ps.toolsChanged <- struct{}{}:
				default: // one is pending: it says as much
				}
			}
		}
		return err
	}
	sb := opts.MCP.Sandbox
	if spec.Name == config.ReservedMCPServerName {
		// A `-- COMMAND` upstream is anyone's program: its private home
		// is its session's alone and goes with it, so one upstream
		// cannot leave code or settings another, with more rights, would
		// load (review #5).
		sb.HomeRoot = filepath.Join(sb.HomeRoot, "proxy-sessions", ps.id)
		ps.home = sb.HomeRoot
	}
	conn, err := mcp.Start(ctx, sb, spec, 1, ps.id, rec)
	if err != nil {
		var serr *mcp.StartError
		tail := ""
		if errors.As(err, &serr) {
			tail = serr.StderrTail
		}
		if ps.home != "" {
			_ = os.RemoveAll(ps.home)
		}
		e.Record(rctx, ledger.Sync, ps.id, &event.MCPServerFailed{Server: spec.Name, Attempt: 1, Error: textclip.Cut(err.Error(), 2048), StderrTail: textclip.Cut(tail, 4096)})
		ps.mu.Lock()
		ps.ended, ps.exitRec = "the upstream did not start", true
		close(ps.endDone)
		ps.mu.Unlock()
		p.drop(ps.id)
		if t := strings.TrimSpace(tail); t != "" {
			err = fmt.Errorf("%w; its stderr ended with: %s", err, textclip.Cut(t, 1024))
		}
		return nil, status.Errorf(codes.FailedPrecondition, "the MCP server %s did not start: %v", spec.Name, err)
	}
	p.mu.Lock()
	ps.conn = conn
	ps.reg, err = ps.newRegistry()
	closed = p.closed
	p.mu.Unlock()
	if err != nil {
		ps.end("opx could not hold its tools", true)
		return nil, status.Errorf(codes.Internal, "the session's tools: %v", err)
	}
	if closed != "" {
		// The engine began stopping while the upstream started.
		ps.end("the engine stopped: "+closed, true)
		return nil, status.Errorf(codes.Unavailable, "the engine is stopping: %s", closed)
	}
	// What the proxy is told next names the session: durable first.
	if err := e.Recorder().Flush(rctx); err == nil {
		err = e.Ledger().Sync(rctx)
		if err != nil {
			e.Fatal(err)
		}
	}
	go ps.watchUpstream()
	return ps, nil
}

// ModeMCPProxy is the mode of an `opx mcp-proxy` session.
const ModeMCPProxy = "mcp-proxy"

// drop forgets a session.
func (p *proxySessions) drop(id string) {
	p.mu.Lock()
	delete(p.byID, id)
	p.gone[id] = true
	p.mu.Unlock()
}

// proxySpec is the upstream open asks for: a configured server of the
// engine's options, or a command line.
func proxySpec(opts engine.Options, open *opxv1.ProxyOpen) (mcp.Spec, error) {
	switch {
	case open.Server != "" && len(open.Command) > 0:
		return mcp.Spec{}, errors.New("name a configured server or give a command, not both")
	case open.Server != "":
		if open.Writable || open.Network {
			return mcp.Spec{}, fmt.Errorf("a configured server's sandbox is its configuration's (mcp.servers.%s.writable, .network); --writable and --network are for a command", textclip.Cut(open.Server, 64))
		}
		names := make([]string, 0, len(opts.MCP.Specs))
		for _, spec := range opts.MCP.Specs {
			if spec.Name == open.Server {
				return spec, nil
			}
			names = append(names, spec.Name)
		}
		return mcp.Spec{}, fmt.Errorf("no MCP server %q is configured, or it is disabled (mcp.servers in .opx/config.yaml, as the engine read it when it started: %s)", textclip.Cut(open.Server, 64), orNone(names))
	case len(open.Command) == 0:
		return mcp.Spec{}, errors.New("name a configured server or give a command")
	case len(open.Command) > proxyMaxArgv:
		return mcp.Spec{}, fmt.Errorf("a command line of %d arguments is over the %d allowed", len(open.Command), proxyMaxArgv)
	}
	for i, a := range open.Command {
		switch {
		case len(a) > proxyMaxArg:
			return mcp.Spec{}, fmt.Errorf("argument %d of the command is %d bytes, over the %d allowed", i, len(a), proxyMaxArg)
		case !utf8.ValidString(a) || strings.ContainsRune(a, 0):
			return mcp.Spec{}, fmt.Errorf("argument %d of the command is not text (invalid UTF-8 or a NUL byte)", i)
		case i == 0 && strings.TrimSpace(a) == "":
			return mcp.Spec{}, errors.New("the command is empty")
		}
	}
	return mcp.Spec{Name: config.ReservedMCPServerName, Argv: append([]string(nil), open.Command...), Workspace: opts.Workspace,
		Writable: open.Writable, Network: open.Network}, nil
}

// proxyEnv is a spec's environment with the variables a proxy passes
// on (its --env) over it.
func proxyEnv(base, extra map[string]string) (map[string]string, error) {
	if len(extra) == 0 {
		return base, nil
	}
	if len(extra) > proxyMaxEnv {
		return nil, fmt.Errorf("%d environment variables for the upstream, over the %d allowed", len(extra), proxyMaxEnv)
	}
	out := make(map[string]string, len(base)+len(extra))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range extra {
		switch {
		case k == "" || len(k) > 128 || strings.ContainsAny(k, "=\x00"):
			return nil, fmt.Errorf("%q is not an environment variable's name", textclip.Cut(k, 64))
		case len(v) > proxyMaxArg*8 || strings.ContainsRune(v, 0):
			return nil, fmt.Errorf("the value of %s is over %d bytes or holds a NUL byte", textclip.Cut(k, 64), proxyMaxArg*8)
		}
		out[k] = v
	}
	return out, nil
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// proxyClient is the mcp.client entry of a session: the client as it
// introduced itself (clipped: every byte of it is the client's), and the
// upstream.
func proxyClient(open *opxv1.ProxyOpen, spec mcp.Spec) *event.MCPClient {
	c := &event.MCPClient{ClientName: textclip.Cut(strings.TrimSpace(open.ClientName), 128), ClientVersion: textclip.Cut(open.ClientVersion, 64),
		ProtocolVersion: textclip.Cut(open.ProtocolVersion, 32), Upstream: spec.Name, Command: spec.Argv}
	if c.ClientName == "" {
		c.ClientName = "unknown"
	}
	for _, cap := range open.Capabilities {
		if len(c.Capabilities) == 32 {
			break
		}
		c.Capabilities = append(c.Capabilities, textclip.Cut(cap, 64))
	}
	return c
}

// clientLabel is a client's name and version for a session title.
func clientLabel(c *event.MCPClient) string {
	if c.ClientVersion != "" {
		return c.ClientName + " " + c.ClientVersion
	}
	return c.ClientName
}

// newRegistry is the session's executor registry: the upstream's tools
// as its latest tools/list named them (a dynamic source, as the engine's
// own servers are), executed by the upstream.
func (ps *proxySession) newRegistry() (*executor.Registry, error) {
	reg, err := executor.NewRegistry()
	if err != nil {
		return nil, err
	}
	src := &mcp.Source{List: ps.conn.Tools, Writable: func(string) bool { return ps.writable },
		Call: func(ctx context.Context, callID, name string, args json.RawMessage) (mcp.Result, error) {
			_, tool, ok := mcp.SplitToolName(name)
			if !ok {
				return mcp.Result{}, fmt.Errorf("%q is not an MCP tool's name", textclip.Cut(name, 128))
			}
			r, err := ps.conn.CallTool(ctx, callID, tool, args)
			if err == nil {
				ps.keep(callID, r)
			}
			return r, err
		}}
	return reg, reg.AddDynamic(mcp.ToolPrefix, src)
}

// keep holds an executed call's result for the call's handler.
func (ps *proxySession) keep(callID string, r mcp.Result) {
	ps.mu.Lock()
	ps.results[callID] = r
	ps.mu.Unlock()
}

// take returns (and forgets) what keep held for callID.
func (ps *proxySession) take(callID string) (mcp.Result, bool) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	r, ok := ps.results[callID]
	delete(ps.results, callID)
	return r, ok
}

// watchUpstream ends the session's calls when the upstream exits.
func (ps *proxySession) watchUpstream() {
	select {
	case <-ps.conn.Done():
		ps.end(reasonUpstreamExited, false)
	case <-ps.endDone:
	}
}

// endDetail says why the session ended, and how its upstream did when
// that was why (valid once endDone is closed).
func (ps *proxySession) endDetail() string {
	ps.mu.Lock()
	reason := ps.ended
	ps.mu.Unlock()
	if reason == reasonUpstreamExited {
		return exitDetail(ps.conn.Exit())
	}
	return reason
}

// reasonUpstreamExited ends a session whose upstream exited on its own.
const reasonUpstreamExited = "the upstream exited"

// isEnded says why the session takes no more calls, or "".
func (ps *proxySession) isEnded() string {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return ps.ended
}

// end ends the session once: no call is taken any more, the approvals its
// calls wait for are denied, the upstream is stopped (stop) or has exited,
// the calls in flight are waited for (up to proxyEndWait), and the
// upstream's end is recorded. Later calls wait for the first to finish.
func (ps *proxySession) end(reason string, stop bool) {
	e := ps.e
	ps.mu.Lock()
	if ps.ended != "" {
		ps.mu.Unlock()
		<-ps.endDone
		return
	}
	ps.ended = reason
	ps.mu.Unlock()
	// Pending approvals of the session's calls, and any asked from now on,
	// are denied: no one is there to act on the answer.
	e.Approvals().DenySubAgent(ps.id, "", "the mcp-proxy session ended: "+reason)
	if stop {
		if err := ps.conn.Close(); err != nil {
			e.Logf("engine: mcp-proxy %s: stop the upstream: %v", ps.id, err)
		}
	}
	waited := make(chan struct{})
	go func() { ps.inFlight.Wait(); close(waited) }()
	t := time.NewTimer(proxyEndWait)
	select {
	case <-waited:
	case <-t.C:
		e.Logf("engine: mcp-proxy %s: calls still in flight %s after its end", ps.id, proxyEndWait)
	}
	t.Stop()
	if !stop {
		_ = ps.conn.Close() // exited: this only reaps what is left
	}
	if ps.home != "" {
		if err := os.RemoveAll(ps.home); err != nil {
			e.Logf("engine: mcp-proxy %s: remove the upstream's home: %v", ps.id, err)
		}
	}
	x := ps.conn.Exit()
	x.RestartInMS = 0
	if x.Server == "" {
		x.Server = ps.upstream
	}
	if x.Reason == "" {
		x.Reason = "stopped"
	}
	ps.mu.Lock()
	ps.exitRec = true
	ps.mu.Unlock()
	e.Record(context.Background(), ledger.Sync, ps.id, &x)
	close(ps.endDone)
	ps.p.drop(ps.id)
}

// Stop ends every session (the engine stops) and opens no more.
func (p *proxySessions) Stop(reason string) {
	p.mu.Lock()
	p.closed = reason
	all := make([]*proxySession, 0, len(p.byID))
	for _, ps := range p.byID {
		if ps.conn != nil { // one still starting ends when it has started
			all = append(all, ps)
		}
	}
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, ps := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ps.end("the engine stopped: "+reason, true)
		}()
	}
	wg.Wait()
}
