package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/opx-dev/opx/cli/internal/ui"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"github.com/urfave/cli/v2"
	"google.golang.org/grpc"
)

// The proxy process of `opx mcp-proxy`: an MCP server (the official Go
// SDK's) on stdio whose requests are answered by the engine over one
// McpProxyService.Proxy stream (engine/mcpproxy). The SDK speaks the
// protocol with the client (initialize, ping, cancellation); a receiving
// middleware hands every request about tools, resources, prompts and
// completions to the engine and returns the engine's answer as it is.

// Bounds of the proxy.
const (
	// proxyMaxLine bounds one JSON-RPC message from the client: a longer
	// line ends the connection (the SDK's frame limit).
	proxyMaxLine = 4 << 20
	// proxyMaxParams bounds a request's params handed to the engine (its
	// gRPC message limit is 4 MiB); a larger request is refused.
	proxyMaxParams = 3 << 20
	// proxyMaxRecv bounds an answer from the engine (it hands on at most
	// 4 MiB of result).
	proxyMaxRecv = 8 << 20
	// proxyOpenWait bounds the wait for the session to open (the engine
	// bounds the upstream's start by its timeout, 60 s by default).
	proxyOpenWait = 3 * time.Minute
	// proxyEndWait bounds the wait, once the client left, for the engine
	// to record the session's end.
	proxyEndWait = 20 * time.Second
)

// proxyProtocolVersions are the MCP versions the proxy speaks: those
// with the initialize handshake, where a connection is one session whose
// client introduces itself first (the session is opened then). A client
// that asks for the stateless protocol (2026-07-28, SEP-2575) is told so
// and falls back to initialize.
var proxyProtocolVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// proxiedMethods are the requests the engine answers.
var proxiedMethods = map[string]bool{"tools/list": true, "tools/call": true, "resources/list": true, "resources/read": true,
	"resources/templates/list": true, "prompts/list": true, "prompts/get": true, "completion/complete": true}

// mcpProxy is one run of `opx mcp-proxy`.
type mcpProxy struct {
	c      *cli.Context
	ec     *engineClient
	target proxyTarget
	errw   io.Writer

	ctx    context.Context // the run's, with the client token
	cancel context.CancelFunc

	sendMu sync.Mutex // gRPC streams are not safe for concurrent sends

	mu       sync.Mutex
	stream   opxv1.McpProxyService_ProxyClient
	opened   *opxv1.ProxyOpened
	openErr  error                              // why the session did not open
	waiting  map[uint64]chan *opxv1.ProxyResult // by call id
	nextID   uint64
	ended    chan struct{} // closed when the stream ended
	endErr   error         // why it ended
	elicits  map[string]context.CancelFunc
	requests map[uint64]*proxyRequest // tools/call requests waiting for their answer, by call id
	waits    map[string]*approvalWait // approvals asked and not resolved, by approval id
	session  *sdk.ServerSession
	server   *sdk.Server
	canElict bool

	// owed holds the ids of the client's requests not yet answered on
	// stdout (mcp_proxy_owed.go), so an end of the session on the
	// engine's side lets the answers it already gave reach the client
	// before the connection closes.
	owed     map[string]bool
	answered *sync.Cond // on mu
}

func newMCPProxy(c *cli.Context, ec *engineClient, t proxyTarget) *mcpProxy {
	ctx, cancel := context.WithCancel(ec.ctx)
	p := &mcpProxy{c: c, ec: ec, target: t, errw: c.App.ErrWriter, ctx: ctx, cancel: cancel,
		waiting: map[uint64]chan *opxv1.ProxyResult{}, ended: make(chan struct{}), elicits: map[string]context.CancelFunc{},
		requests: map[uint64]*proxyRequest{}, waits: map[string]*approvalWait{}}
	p.answered = sync.NewCond(&p.mu)
	return p
}

func (p *mcpProxy) logf(format string, args ...any) {
	fmt.Fprintf(p.errw, "opx mcp-proxy: "+format+"\n", args...)
}

// run serves the client on stdin/stdout until it disconnects or the
// session ends on the engine's side.
func (p *mcpProxy) run() error {
	defer p.cancel()
	server := sdk.NewServer(&sdk.Implementation{Name: "opx-mcp-proxy", Version: Version},
		&sdk.ServerOptions{Capabilities: &sdk.ServerCapabilities{}, SupportedProtocolVersions: proxyProtocolVersions})
	server.AddReceivingMiddleware(p.middleware)
	p.mu.Lock()
	p.server = server
	p.mu.Unlock()
	in := p.c.App.Reader
	if in == nil {
		in = os.Stdin
	}
	t := &sdk.IOTransport{Reader: io.NopCloser(&requestReader{r: in, p: p, max: proxyMaxLine}), Writer: answerWriter{p.c.App.Writer, p}, MaxLineLength: proxyMaxLine}
	ss, err := server.Connect(p.ctx, t, nil)
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.session = ss
	p.mu.Unlock()
	clientGone := make(chan error, 1)
	go func() { clientGone <- ss.Wait() }()
	select {
	case err := <-clientGone:
		// The client left (stdin closed): end the session and wait until
		// the engine has recorded its end.
		if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, context.Canceled) {
			p.logf("the client's connection ended: %v", err)
		}
		p.closeSend()
		p.mu.Lock()
		opened, openErr := p.stream != nil, p.openErr
		p.mu.Unlock()
		if !opened {
			if openErr == nil || errors.Is(openErr, errClientLeft) {
				return nil // the client left before the session opened
			}
			return openErr
		}
		select {
		case <-p.ended:
		case <-time.After(proxyEndWait):
			p.logf("the engine did not end the session within %s", proxyEndWait)
		}
		return nil
	case <-p.ended:
		// The engine ended the session (it stopped, or the upstream
		// exited): the client is told by the connection's end, after the
		// answers the engine gave before it (a call the upstream's crash
		// ended is answered with that error first).
		p.waitAnswered(proxyEndWait)
		_ = ss.Close()
		p.mu.Lock()
		err := p.endErr
		p.mu.Unlock()
		return fmt.Errorf("the session ended: %w", err)
	}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// answerWriter writes the SDK's messages to the client and pays for the
// requests its answers answer (owed).
type answerWriter struct {
	w io.Writer
	p *mcpProxy
}

func (a answerWriter) Write(b []byte) (int, error) {
	n, err := a.w.Write(b)
	a.p.pay(b)
	return n, err
}

func (answerWriter) Close() error { return nil }

// waitAnswered waits until every request handled has been answered on
// stdout, for at most d.
func (p *mcpProxy) waitAnswered(d time.Duration) {
	t := time.AfterFunc(d, func() {
		p.mu.Lock()
		clear(p.owed) // given up: what is left is not waited for
		p.answered.Broadcast()
		p.mu.Unlock()
	})
	defer t.Stop()
	p.mu.Lock()
	for len(p.owed) > 0 {
		p.answered.Wait()
	}
	p.mu.Unlock()
}

// middleware answers the requests the engine answers; the SDK answers
// the rest (ping, logging).
func (p *mcpProxy) middleware(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		switch {
		case method == "initialize":
			return p.initialize(ctx, next, method, req)
		case proxiedMethods[method]:
			return p.call(ctx, method, req.GetParams())
		}
		return next(ctx, method, req)
	}
}

// initialize opens the session with the client's introduction, then
// answers the client with what the upstream offers.
func (p *mcpProxy) initialize(ctx context.Context, next sdk.MethodHandler, method string, req sdk.Request) (sdk.Result, error) {
	params, _ := req.GetParams().(*sdk.InitializeParams)
	if err := p.open(ctx, params); err != nil {
		// The client is told now; the command says it once, as its
		// error, when the client leaves (run).
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "opx: " + err.Error()}
	}
	res, err := next(ctx, method, req)
	if err != nil {
		return res, err
	}
	ir, ok := res.(*sdk.InitializeResult)
	if !ok {
		return res, nil
	}
	p.mu.Lock()
	o := p.opened
	p.mu.Unlock()
	caps, info, instructions := upstreamOffer(o)
	ir.Capabilities, ir.Instructions = caps, instructions
	if info != nil {
		ir.ServerInfo = info
	}
	return ir, nil
}

// upstreamOffer is what the proxy tells the client the upstream offers:
// tools always (through opx, told when they change), logging (opx's own
// messages), resources, prompts
// and completions when the upstream has them (all three when its answer
// to initialize is not known), without subscriptions or their
// list-changed notifications (not passed on).
func upstreamOffer(o *opxv1.ProxyOpened) (*sdk.ServerCapabilities, *sdk.Implementation, string) {
	// logging: the proxy tells the client about calls that wait for a
	// human (notifications/message, at the level the client set).
	caps := &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{ListChanged: true}, Logging: &sdk.LoggingCapabilities{}}
	var up sdk.InitializeResult
	if o == nil || len(o.InitializeResult) == 0 || json.Unmarshal(o.InitializeResult, &up) != nil || up.Capabilities == nil {
		caps.Resources, caps.Prompts, caps.Completions = &sdk.ResourceCapabilities{}, &sdk.PromptCapabilities{}, &sdk.CompletionCapabilities{}
	} else {
		if up.Capabilities.Resources != nil {
			caps.Resources = &sdk.ResourceCapabilities{}
		}
		if up.Capabilities.Prompts != nil {
			caps.Prompts = &sdk.PromptCapabilities{}
		}
		if up.Capabilities.Completions != nil {
			caps.Completions = &sdk.CompletionCapabilities{}
		}
	}
	var info *sdk.Implementation
	if o != nil && o.ServerName != "" {
		info = &sdk.Implementation{Name: o.ServerName, Version: o.ServerVersion, Title: o.ServerName + " (through opx mcp-proxy)"}
	}
	return caps, info, up.Instructions
}

// open opens the Proxy stream and the session: the client as it
// introduced itself, and the upstream.
func (p *mcpProxy) open(ctx context.Context, params *sdk.InitializeParams) error {
	p.mu.Lock()
	if p.stream != nil || p.openErr != nil {
		p.mu.Unlock()
		return errors.New("the client initialized twice")
	}
	p.mu.Unlock()
	open := &opxv1.ProxyOpen{Server: p.target.server, Command: p.target.command, Writable: p.target.writable, Network: p.target.network,
		Env: p.target.env}
	if params != nil {
		if ci := params.ClientInfo; ci != nil {
			open.ClientName, open.ClientVersion = ci.Name, ci.Version
		}
		open.ProtocolVersion = params.ProtocolVersion
		open.Capabilities = capabilityNames(params.Capabilities)
		p.canElict = p.target.elicit && params.Capabilities != nil && params.Capabilities.Elicitation != nil
	}
	stream, err := opxv1.NewMcpProxyServiceClient(p.ec.conn).Proxy(p.ctx, grpc.MaxCallRecvMsgSize(proxyMaxRecv))
	if err == nil {
		err = stream.Send(&opxv1.ProxyRequest{Request: &opxv1.ProxyRequest_Open{Open: open}})
	}
	var opened *opxv1.ProxyOpened
	if err == nil {
		first := make(chan error, 1)
		go func() {
			r, err := stream.Recv()
			if err == nil {
				if opened = r.GetOpened(); opened == nil {
					err = errors.New("the engine answered the session's opening with something else")
				}
			}
			first <- err
		}()
		t := time.NewTimer(proxyOpenWait)
		defer t.Stop()
		select {
		case err = <-first:
		case <-t.C:
			err = fmt.Errorf("the session did not open within %s", proxyOpenWait)
		case <-ctx.Done():
			err = ctx.Err()
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			err = errClientLeft // the client closed the connection while the session opened
		} else {
			err = fmt.Errorf("open the session: %s", grpcMessage(err))
		}
		p.mu.Lock()
		p.openErr = err
		p.mu.Unlock()
		return err
	}
	p.mu.Lock()
	p.stream, p.opened = stream, opened
	p.mu.Unlock()
	name := opened.Upstream
	if opened.ServerName != "" {
		name += " (" + strings.TrimSpace(opened.ServerName+" "+opened.ServerVersion) + ")"
	}
	p.logf("session %s: %s in front of %s; review it with: opx replay %s", opened.SessionId, clientDisplay(open), name, opened.SessionId)
	go p.receive(stream)
	return nil
}

// clientDisplay names the client as it introduced itself.
func clientDisplay(o *opxv1.ProxyOpen) string {
	if o.ClientName == "" {
		return "an unnamed client"
	}
	return strings.TrimSpace(ui.Clip(o.ClientName, 64) + " " + ui.Clip(o.ClientVersion, 32))
}

// capabilityNames are the client's declared capabilities by name.
func capabilityNames(c *sdk.ClientCapabilities) []string {
	if c == nil {
		return nil
	}
	b, err := json.Marshal(c)
	if err != nil {
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	var out []string
	for k, v := range m {
		if string(v) != "null" {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// receive reads the engine's side of the stream until it ends: answers
// to calls, approvals to show (and ask the client about), notices.
func (p *mcpProxy) receive(stream opxv1.McpProxyService_ProxyClient) {
	var err error
	for {
		var r *opxv1.ProxyResponse
		if r, err = stream.Recv(); err != nil {
			break
		}
		switch x := r.Response.(type) {
		case *opxv1.ProxyResponse_Result:
			p.mu.Lock()
			ch := p.waiting[x.Result.Id]
			delete(p.waiting, x.Result.Id)
			p.mu.Unlock()
			if ch != nil {
				ch <- x.Result // buffered
			}
		case *opxv1.ProxyResponse_Approval:
			p.approval(x.Approval)
		case *opxv1.ProxyResponse_Notice:
			switch x.Notice.Kind {
			case "session_ended":
				p.logf("%s", x.Notice.Detail)
				err = errors.New(x.Notice.Detail)
			case "tools_changed":
				p.toolsChanged()
			}
		}
		if err != nil {
			break
		}
	}
	if errors.Is(err, io.EOF) {
		err = errors.New("the engine ended it")
	}
	p.mu.Lock()
	p.endErr = errors.New(grpcMessage(err))
	for id, ch := range p.waiting {
		close(ch)
		delete(p.waiting, id)
	}
	for _, cancel := range p.elicits {
		cancel()
	}
	p.mu.Unlock()
	close(p.ended)
}

// toolsChanged tells the client that the upstream's tools changed
// (notifications/tools/list_changed). The SDK sends that when the
// server's own tools change; the proxy's are never listed (tools/list is
// the engine's), so adding and removing a placeholder says it.
func (p *mcpProxy) toolsChanged() {
	p.mu.Lock()
	s := p.server
	p.mu.Unlock()
	if s == nil {
		return
	}
	s.AddTool(&sdk.Tool{Name: toolsChangedPlaceholder, InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return nil, errors.New("not a tool")
		})
	s.RemoveTools(toolsChangedPlaceholder)
}

// errClientLeft is why a session did not open when the client closed
// its connection while it opened: not an error of the command.
var errClientLeft = errors.New("the client left before the session opened")

// toolsChangedPlaceholder is the tool toolsChanged adds and removes.
const toolsChangedPlaceholder = "opx-mcp-proxy-tools-changed"

// call hands one request to the engine and waits for its answer (or the
// client's cancellation, or the session's end).
func (p *mcpProxy) call(ctx context.Context, method string, params sdk.Params) (sdk.Result, error) {
	raw := []byte("{}")
	if params != nil {
		b, err := json.Marshal(params)
		if err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "opx: params: " + err.Error()}
		}
		if string(b) != "null" {
			raw = b
		}
	}
	if len(raw) > proxyMaxParams {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("opx: a request of %d bytes is over the %d opx mcp-proxy takes", len(raw), proxyMaxParams)}
	}
	p.mu.Lock()
	stream, openErr := p.stream, p.openErr
	select {
	case <-p.ended:
		p.mu.Unlock()
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "opx: the session ended: " + p.endErr.Error()}
	default:
	}
	if stream == nil {
		p.mu.Unlock()
		if openErr == nil {
			openErr = errors.New("the client did not initialize")
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "opx: no session: " + openErr.Error()}
	}
	p.nextID++
	id := p.nextID
	ch := make(chan *opxv1.ProxyResult, 1)
	p.waiting[id] = ch
	if method == "tools/call" {
		// Its approval, if Shield asks for one, is told to the client
		// with this request's progress token (approvalWait).
		r := &proxyRequest{ctx: ctx, token: progressToken(params)}
		p.requests[id] = r
		defer p.answeredRequest(id, r)
	}
	p.mu.Unlock()
	p.sendMu.Lock()
	err := stream.Send(&opxv1.ProxyRequest{Request: &opxv1.ProxyRequest_Call{Call: &opxv1.ProxyCall{Id: id, Method: method, Params: raw}}})
	p.sendMu.Unlock()
	if err != nil {
		p.forget(id)
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "opx: the engine: " + grpcMessage(err)}
	}
	select {
	case r, ok := <-ch:
		if !ok {
			p.mu.Lock()
			why := p.endErr
			p.mu.Unlock()
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "opx: the session ended before the answer: " + why.Error()}
		}
		if r.Error != "" || r.ErrorCode != 0 {
			return nil, &jsonrpc.Error{Code: int64(r.ErrorCode), Message: r.Error}
		}
		return &rawResult{raw: r.Result}, nil
	case <-ctx.Done():
		// The client cancelled it: the engine denies its pending
		// approval, if any, or takes it to its recorded end; the answer
		// is dropped.
		p.forget(id)
		p.sendMu.Lock()
		_ = stream.Send(&opxv1.ProxyRequest{Request: &opxv1.ProxyRequest_Cancel{Cancel: &opxv1.ProxyCancel{Id: id}}})
		p.sendMu.Unlock()
		return nil, ctx.Err()
	}
}

func (p *mcpProxy) forget(id uint64) {
	p.mu.Lock()
	delete(p.waiting, id)
	p.mu.Unlock()
}

// closeSend tells the engine the client left.
func (p *mcpProxy) closeSend() {
	p.mu.Lock()
	stream := p.stream
	p.mu.Unlock()
	if stream == nil {
		return
	}
	p.sendMu.Lock()
	_ = stream.CloseSend()
	p.sendMu.Unlock()
}

// rawResult is an answer as the engine gave it: the upstream's, byte for
// byte up to JSON white space.
type rawResult struct {
	sdk.ResultBase
	raw json.RawMessage
}

// MarshalJSON implements json.Marshaler.
func (r *rawResult) MarshalJSON() ([]byte, error) {
	if len(r.raw) == 0 {
		return []byte("{}"), nil
	}
	return r.raw, nil
}

// grpcMessage is an error's text without gRPC's "rpc error: code = ..."
// wrapping.
func grpcMessage(err error) string {
	if err == nil {
		return "no error"
	}
	s := err.Error()
	if _, m, ok := strings.Cut(s, " desc = "); ok {
		return m
	}
	return s
}
