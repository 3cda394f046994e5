package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// Bounds of a server's life.
const (
	// protocolVersion is the version opx asks for; the server may answer
	// with an older one the SDK supports.
	protocolVersion = "2025-11-25"
	// stopGrace is how long Close waits after closing a server's stdin,
	// and again after SIGTERM, before the next step.
	stopGrace = 2 * time.Second
	// killWait bounds the wait for a process group after SIGKILL.
	killWait = 10 * time.Second
	// recordTimeout bounds one recording of what the transport saw.
	recordTimeout = 10 * time.Second
	// outputGrace bounds the wait for a server's output pipes to close
	// once its process group is dead (only a process outside the group
	// could hold them open, and the command sandbox lets none leave it).
	outputGrace = time.Second
)

// probeTimeout bounds the ping that follows a timed-out request: a
// server that does not answer it either is killed as unresponsive. (A
// variable for the tests.)
var probeTimeout = 10 * time.Second

// forwardMethods are the requests Forward passes on.
var forwardMethods = map[string]bool{
	"resources/list": true, "resources/read": true, "resources/templates/list": true,
	"prompts/list": true, "prompts/get": true, "completion/complete": true, "ping": true,
}

// StartError is returned by Start when the server did not come up (it
// could not be launched, it exited, or it did not complete initialize in
// time); it carries the tail of the server's stderr for mcp.server_failed.
type StartError struct {
	Err        error
	StderrTail string
}

func (e *StartError) Error() string { return e.Err.Error() }
func (e *StartError) Unwrap() error { return e.Err }

// Conn is one running, initialized server.
//
// Contract: Start starts the process through the sandbox, completes
// initialize (within spec.Timeout), lists its tools, and records
// mcp.server_started and mcp.tools_listed (in session); if it cannot, it
// records nothing and returns the error (the caller records
// mcp.server_failed). When the process ends, Done is closed and Exit says
// how (the caller records mcp.server_exited, knowing whether it restarts).
type Conn struct {
	spec     Spec
	timeout  time.Duration
	session  string
	instance int
	rec      Recorder
	budget   *ListingBudget
	log      *serverLog
	logDone  chan struct{}
	proc     *process
	lc       *lineConn
	cs       *sdk.ClientSession
	problems *problemLog
	start    event.MCPServerStarted

	mu          sync.Mutex
	tools       []Tool
	listingHash string
	reason      string // why opx ended it: stopped, unresponsive, protocol

	relist chan struct{}
	frz    *freezer // writable servers: frozen between requests
	// relistDue: a writable server's tools changed; they are listed at
	// its next call, inside that call's snapshot window, never between
	// calls (review #2).
	relistDue atomic.Bool
	listMu    sync.Mutex // one relisting at a time; guards recorded
	recorded  int        // listings recorded by this start
	probing   atomic.Bool
	// probeWait bounds the ping after a timeout: probeTimeout when the
	// Conn started (read once: a probe may outlive the call that began it).
	probeWait time.Duration
	closeOnce sync.Once
	done      chan struct{}
	exit      event.MCPServerExited
}

// Start runs spec's server under sb and initializes it; instance numbers
// this start of it. Entries go to rec in session.
func Start(ctx context.Context, sb Sandbox, spec Spec, instance int, session string, rec Recorder) (*Conn, error) {
	launcher, box, env, err := prepare(sb, spec)
	if err != nil {
		return nil, &StartError{Err: err}
	}
	proc, err := startProcess(launcher, spec.Workspace, env)
	if err != nil {
		return nil, &StartError{Err: err}
	}
	c := &Conn{
		spec: spec, timeout: spec.timeout(), probeWait: probeTimeout, session: session, instance: instance, rec: rec, budget: spec.ListingBudget,
		log: newServerLog(sb.Log, spec.Name, instance), logDone: make(chan struct{}), proc: proc,
		relist: make(chan struct{}, 1), done: make(chan struct{}),
	}
	if c.budget == nil {
		c.budget = NewListingBudget()
	}
	c.problems = newProblemLog(c)
	go func() {
		defer close(c.logDone)
		c.log.pump(proc.stderr)
	}()
	c.lc = newLineConn(proc.stdin, proc.stdout, MaxFrameBytes, c.problems.add, c.log.logf)
	c.lc.toolsChanged = func() {
		if spec.Writable {
			// Listed at its next call (CallTool), never between calls;
			// set here, on the reader, so that a call that has read the
			// notification relists at the next one, whatever runs when.
			c.relistDue.Store(true)
			return
		}
		select {
		case c.relist <- struct{}{}:
		default:
		}
	}
	go c.watch()
	go c.watchOutput()

	// A start (the process, its sandbox, initialize, the first listing)
	// gets at least MinStartTimeout, whatever the request timeout: a
	// short one for calls must not fail a start on a busy machine.
	startTimeout := max(c.timeout, MinStartTimeout)
	ictx, cancel := context.WithTimeoutCause(ctx, startTimeout, fmt.Errorf("%w: its start took over %v", ErrTimeout, startTimeout))
	defer cancel()
	if err := c.initialize(ictx); err != nil {
		return nil, c.abort(ictx, err)
	}
	tools, listed, blob, err := c.listTools(ictx)
	if err != nil {
		return nil, c.abort(ictx, fmt.Errorf("tools/list: %w", err))
	}
	if err := c.budget.take(listed.Size); err != nil {
		return nil, c.abort(ictx, err)
	}
	init := c.cs.InitializeResult()
	c.start = event.MCPServerStarted{
		Server: spec.Name, Instance: instance, Command: slices.Clone(spec.Argv), PID: proc.pid, Sandbox: box,
		ProtocolVersion: clip(init.ProtocolVersion, 64),
	}
	if init.ServerInfo != nil {
		c.start.ServerName, c.start.ServerVersion = clip(init.ServerInfo.Name, 128), clip(init.ServerInfo.Version, 64)
	}
	if err := rec(ctx, ledger.Sync, session, &c.start); err != nil {
		return nil, c.abort(ctx, fmt.Errorf("recording mcp.server_started: %w", err))
	}
	if err := c.recordListing(ctx, tools, listed, blob); err != nil {
		c.Close()
		return nil, fmt.Errorf("recording mcp.tools_listed: %w", err)
	}
	c.problems.ready()
	if spec.Writable {
		// From here on a writable server runs only while opx waits for
		// one of its answers (review #2).
		c.frz = &freezer{proc: proc}
		c.lc.hold = c.frz.hold
		c.frz.freeze()
	}
	go c.relistLoop()
	return c, nil
}

func (s Spec) timeout() time.Duration {
	if s.Timeout > 0 {
		return s.Timeout
	}
	return DefaultTimeout
}

// connTransport hands the SDK the Conn's line connection.
type connTransport struct{ lc *lineConn }

func (t connTransport) Connect(context.Context) (sdk.Connection, error) { return t.lc, nil }

// initialize runs the SDK's client handshake over the line connection.
func (c *Conn) initialize(ctx context.Context) error {
	client := sdk.NewClient(&sdk.Implementation{Name: "opx", Version: opxVersion()}, &sdk.ClientOptions{
		// No roots, sampling or elicitation: a server gets nothing from
		// opx but answers to its tool calls.
		Capabilities: &sdk.ClientCapabilities{},
		Logger:       slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	cs, err := client.Connect(ctx, connTransport{c.lc}, &sdk.ClientSessionOptions{ProtocolVersion: protocolVersion})
	if err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	c.cs = cs
	return nil
}

// abort ends a server that did not come up and returns the StartError.
func (c *Conn) abort(ctx context.Context, err error) error {
	// A start that ran out of time failed for that reason, whatever the
	// server does once the client hangs up on it (it may well exit):
	// saying it "ended before it was ready" would depend on how fast it
	// goes, and blame the server for opx's own hang-up.
	timedOut := ctx.Err() != nil
	if cause := context.Cause(ctx); timedOut && cause != nil {
		err = cause
	}
	// A server whose output ended on its own is on its way out: let it
	// end, so that its exit status and stderr say why.
	if !timedOut && waitFor(c.lc.readDone, 0) {
		waitFor(c.proc.exited, outputGrace)
	}
	ended := !timedOut && waitFor(c.proc.exited, 0)
	c.Close()
	if ended {
		code, sig := c.proc.exitStatus()
		how := fmt.Sprintf("exit status %d", code)
		if sig != "" {
			how = "killed by " + sig
		}
		err = fmt.Errorf("the server ended (%s) before it was ready: %w", how, err)
	}
	tail := c.log.Tail()
	if last := lastLine(tail); last != "" {
		err = fmt.Errorf("%w (stderr: %s)", err, clip(last, 300))
	}
	return &StartError{Err: err, StderrTail: tail}
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\r\n\t ")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return strings.TrimSpace(s)
}

// watch waits for the process to end, lets its output drain (bounded),
// and closes Done.
func (c *Conn) watch() {
	<-c.proc.exited
	grace := time.NewTimer(outputGrace)
	defer grace.Stop()
	for _, ch := range []chan struct{}{c.lc.readDone, c.logDone} {
		select {
		case <-ch:
		case <-grace.C:
			grace.Reset(0) // the grace is spent: do not wait for the next either
		}
	}
	c.lc.Close()
	c.proc.stderr.Close()
	code, sig := c.proc.exitStatus()
	c.mu.Lock()
	reason := c.reason
	if reason == "" {
		reason = "crashed"
	}
	c.reason = reason
	c.mu.Unlock()
	c.exit = event.MCPServerExited{
		Server: c.spec.Name, Instance: c.instance, PID: c.proc.pid, ExitCode: code, Signal: sig,
		Reason: reason, StderrTail: c.log.Tail(),
	}
	c.problems.flush()
	close(c.done)
}

// watchOutput ends a server that closed its output but lives on: it can
// answer nothing more.
func (c *Conn) watchOutput() {
	select {
	case <-c.lc.readDone:
	case <-c.proc.exited:
		return
	}
	if !waitFor(c.proc.exited, outputGrace) {
		c.log.logf("its output ended but it did not exit: ending it")
		c.kill("protocol")
	}
}

// endAs notes why opx is ending the server, unless it already did.
func (c *Conn) endAs(reason string) {
	c.mu.Lock()
	if c.reason == "" {
		c.reason = reason
	}
	c.mu.Unlock()
}

// kill ends the server at once, for reason.
func (c *Conn) kill(reason string) {
	c.endAs(reason)
	c.proc.signal(syscall.SIGKILL)
}

// Tools are the server's tools as of its latest tools/list.
func (c *Conn) Tools() []Tool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.tools)
}

func (c *Conn) hasTool(name string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, t := range c.tools {
		if t.Tool == name {
			return true
		}
	}
	return false
}

// CallTool calls the server's own tool (its name without the prefix),
// bounded by the spec's timeout and ctx. callID names the pipeline's call
// in any mcp.protocol_error. An error (not an error Result) means there
// was no answer: the server died, timed out, or answered nonsense. An
// answer that is a JSON-RPC error (an unknown tool, invalid arguments)
// is an error Result with no Raw.
func (c *Conn) CallTool(ctx context.Context, callID, tool string, args json.RawMessage) (Result, error) {
	if c.ended() {
		return Result{}, ErrNotRunning
	}
	if !c.hasTool(tool) {
		return Result{}, fmt.Errorf("%w: %s has no tool %q", ErrUnknownTool, c.spec.Name, clip(tool, 80))
	}
	args, err := objectArgs(args)
	if err != nil {
		return Result{}, err
	}
	if c.frz != nil {
		// One window for the whole call: the relisting, the call and
		// the ping after it.
		release := c.frz.hold()
		defer release()
		if c.relistDue.Swap(false) {
			// Its tools changed since its last call: listed now, while
			// the caller's snapshot window is open (the new listing is
			// for the calls after this one).
			c.relistNow()
		}
	}
	ctx, cancel := context.WithTimeoutCause(ctx, c.timeout, fmt.Errorf("%w: %s did not answer tools/call %s within %v", ErrTimeout, c.spec.Name, tool, c.timeout))
	defer cancel()
	params := map[string]any{"name": tool, "arguments": args}
	if tp := traceparentOf(ctx); tp != "" {
		// The MCP semantic conventions' propagation: the server's spans
		// join the trace of the call (docs/telemetry.md).
		params["_meta"] = map[string]string{"traceparent": tp}
	}
	raw, err := c.lc.call(ctx, "tools/call", params, callID)
	if err == nil && c.frz != nil {
		// What the call made it send (tools/list_changed) is read before
		// it is stopped again: it answers a ping only after it, in order
		// on its output. A server that does not answer is left to its
		// next call's timeout; the call has its answer.
		pctx, pcancel := context.WithTimeout(ctx, min(c.timeout, c.probeWait))
		_, _ = c.lc.call(pctx, "ping", map[string]any{}, "")
		pcancel()
	}
	if err != nil {
		var werr *jsonrpc.Error
		if errors.As(err, &werr) {
			return Result{Text: fmt.Sprintf("MCP error %d: %s", werr.Code, clip(werr.Message, 4<<10)), IsError: true}, nil
		}
		c.probeAfter(err)
		return Result{}, fmt.Errorf("mcp %s: tools/call %s: %w", c.spec.Name, tool, err)
	}
	r, err := renderResult(raw)
	if err != nil {
		c.problems.add(problem{kind: "malformed", size: int64(len(raw)), detail: "tools/call result: " + clip(err.Error(), 200), callID: callID})
		return Result{}, fmt.Errorf("mcp %s: tools/call %s: %w: %v", c.spec.Name, tool, ErrMalformed, err)
	}
	return r, nil
}

// objectArgs checks that args is a JSON object (empty or null: {}).
func objectArgs(args json.RawMessage) (json.RawMessage, error) {
	t := strings.TrimSpace(string(args))
	if t == "" || t == "null" {
		return json.RawMessage("{}"), nil
	}
	if t[0] != '{' || !json.Valid(args) {
		return nil, ErrBadArguments
	}
	return args, nil
}

// Forward passes a request other than tools/call (resources/list,
// resources/read, resources/templates/list, prompts/list, prompts/get,
// completion/complete, ping) to the server and returns its result as
// received, bounded like CallTool. Methods outside that list are refused.
// A JSON-RPC error answer is returned as a *jsonrpc.Error
// (github.com/modelcontextprotocol/go-sdk/jsonrpc), to hand on as is.
func (c *Conn) Forward(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	if !forwardMethods[method] {
		return nil, fmt.Errorf("%w: %q", ErrMethodRefused, clip(method, 80))
	}
	if c.ended() {
		return nil, ErrNotRunning
	}
	params, err := objectArgs(params)
	if err != nil {
		return nil, fmt.Errorf("%s params: %w", method, err)
	}
	ctx, cancel := context.WithTimeoutCause(ctx, c.timeout, fmt.Errorf("%w: %s did not answer %s within %v", ErrTimeout, c.spec.Name, method, c.timeout))
	defer cancel()
	raw, err := c.lc.call(ctx, method, params, "")
	if err != nil {
		var werr *jsonrpc.Error
		if errors.As(err, &werr) {
			return nil, werr
		}
		c.probeAfter(err)
		return nil, fmt.Errorf("mcp %s: %s: %w", c.spec.Name, method, err)
	}
	return raw, nil
}

// probeAfter probes the server after a request that got no answer in
// time (its own timeout or the caller's deadline) or could not be sent.
func (c *Conn) probeAfter(err error) {
	if errors.Is(err, ErrTimeout) || errors.Is(err, ErrUnresponsive) || errors.Is(err, context.DeadlineExceeded) {
		if c.frz != nil {
			// A writable server runs only inside a call: the ping too.
			c.probeSync()
			return
		}
		c.probe()
	}
}

// probeSync is probe, waiting for the ping's answer.
func (c *Conn) probeSync() {
	if !c.probing.CompareAndSwap(false, true) {
		return
	}
	defer c.probing.Store(false)
	c.ping()
}

// probe pings a server after a request timed out, and kills it as
// unresponsive if it does not answer that either.
func (c *Conn) probe() {
	if !c.probing.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer c.probing.Store(false)
		c.ping()
	}()
}

// ping pings the server, and kills it as unresponsive if it does not
// answer.
func (c *Conn) ping() {
	ctx, cancel := context.WithTimeoutCause(context.Background(), min(c.timeout, c.probeWait), ErrTimeout)
	defer cancel()
	if _, err := c.lc.call(ctx, "ping", map[string]any{}, ""); err != nil && !c.ended() {
		var werr *jsonrpc.Error
		if !errors.As(err, &werr) { // an error answer is an answer
			c.log.logf("did not answer a ping after a timeout (%v): ending it", err)
			c.kill("unresponsive")
		}
	}
}

func (c *Conn) ended() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// InitializeResult is the server's answer to initialize as received
// (protocolVersion, capabilities, serverInfo, instructions), for a proxy
// to present the upstream as it is; one over 1 MiB is re-encoded from
// what the SDK read.
func (c *Conn) InitializeResult() json.RawMessage {
	c.lc.mu.Lock()
	raw := c.lc.initResult
	c.lc.mu.Unlock()
	if raw != nil {
		return slices.Clone(raw)
	}
	raw, _ = json.Marshal(c.cs.InitializeResult())
	return raw
}

// Started is the mcp.server_started this Conn recorded.
func (c *Conn) Started() event.MCPServerStarted { return c.start }

// Done is closed once the process has ended.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Exit says how the process ended (valid once Done is closed); Reason
// "stopped" when Close ended it, "unresponsive" when opx killed it after
// it stopped answering. RestartInMS is left 0 for the caller.
func (c *Conn) Exit() event.MCPServerExited {
	select {
	case <-c.done:
		return c.exit
	default:
		return event.MCPServerExited{}
	}
}

// Close ends the server (stdin closed, then SIGTERM, then SIGKILL, the
// whole process group) and waits for it, a bounded time.
func (c *Conn) Close() error {
	var err error
	c.closeOnce.Do(func() {
		c.endAs("stopped")
		c.lc.closeInput()
		steps := []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL}
		wait := stopGrace
		if c.frz != nil {
			// A writable server is not continued to end at its own pace
			// (it could change the workspace then, outside any call): it
			// is killed where it stands.
			c.frz.stayFrozen()
			steps, wait = []syscall.Signal{syscall.SIGKILL}, 0
		}
		for !waitFor(c.proc.exited, wait) {
			if len(steps) == 0 {
				err = fmt.Errorf("mcp %s: the server's process %d did not end after SIGKILL", c.spec.Name, c.proc.pid)
				return
			}
			c.proc.signal(steps[0])
			if steps[0] == syscall.SIGKILL {
				wait = killWait
			}
			steps = steps[1:]
		}
		<-c.done // bounded: watch waits outputGrace at most
		if c.cs != nil {
			closed := make(chan struct{})
			go func() {
				defer close(closed)
				c.cs.Close()
			}()
			waitFor(closed, time.Second)
		}
	})
	return err
}

// waitFor reports whether ch is closed within d (0: now).
func waitFor(ch <-chan struct{}, d time.Duration) bool {
	select {
	case <-ch:
		return true
	default:
		if d <= 0 {
			return false
		}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	}
}

// opxVersion is the version opx reports to servers.
func opxVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "dev"
}

// traceparentKey carries the W3C trace context of a tools/call.
type traceparentKey struct{}

// WithTraceparent returns ctx carrying tp, the W3C traceparent CallTool
// sends the server in params._meta.traceparent.
func WithTraceparent(ctx context.Context, tp string) context.Context {
	return context.WithValue(ctx, traceparentKey{}, tp)
}

func traceparentOf(ctx context.Context) string {
	tp, _ := ctx.Value(traceparentKey{}).(string)
	return tp
}
