package engine

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"time"

	"github.com/opx-dev/opx/engine/mcp"
	"github.com/opx-dev/opx/internal/textclip"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
)

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

// MCPConfig configures the engine's MCP servers.
type MCPConfig struct {
	Sandbox mcp.Sandbox
	Specs   []mcp.Spec
	// Disabled are the configured servers not started (reported as such).
	Disabled []string
	// StartTimeout bounds how long a message waits for the servers to be
	// started (or to have failed) once, so its agent is offered their
	// tools; default 2 minutes. The engine itself never waits for them.
	StartTimeout time.Duration
	// MaxProxySessions bounds the open `opx mcp-proxy` sessions; a new
	// one over it is refused (ResourceExhausted). Default 32.
	MaxProxySessions int
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
