package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/opx-dev/opx/engine/executor"
	"github.com/opx-dev/opx/engine/mcp"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

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

// Replaying is the driver re-driving a recorded session in replay mode
// (NewReplay), nil in a live engine.
func (e *Engine) Replaying() ReplayMode { return e.opts.replay }

// MCPRecorder is the Recorder MCP servers record through: a ledger
// failure stops the engine, as any of its own.
func (e *Engine) MCPRecorder() mcp.Recorder { return e.mcpRecorder() }

// Subscribe follows the events the engine publishes for session (its
// approvals, verdicts, ...) until the Subscription is closed.
func (e *Engine) Subscribe(session string) *Subscription { return e.bc.Subscribe(session) }
