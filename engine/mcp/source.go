package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/opx-dev/opx/engine/executor"
	"github.com/opx-dev/opx/engine/mcp"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
)

// MCP servers for opx's own agent (docs/mcp.md): the servers of the
// configuration's mcp.servers run under an mcp.Manager the engine starts
// with itself and stops before engine.stopped; their tools are a dynamic
// source of the executor registry (mcpTools), so the agent is offered
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

// GroupMCPPrefix starts the tool group of each MCP server: mcp:<server>.
const GroupMCPPrefix = mcp.GroupPrefix

// maxMCPDescription bounds the description of an MCP tool offered to the
// model: it is the server's text, sent with every model call.
const maxMCPDescription = 2 << 10

// mcpTools offers the running servers' tools to the registry. In replay
// mode it offers the tools the record says were offered (engine/redrive/mcp.go)
// and is never asked to execute.
type mcpTools struct {
	// tools lists the tools as of now, and spec says whether a server is
	// writable.
	tools func() []mcp.Tool
	// writable says whether a server may change the workspace.
	writable func(server string) bool
	// call runs one (nil in replay mode).
	call func(ctx context.Context, callID, name string, args json.RawMessage) (mcp.Result, error)
}

// Tools implements executor.Executor.
func (t *mcpTools) Tools() []executor.ToolDef {
	ts := t.tools()
	out := make([]executor.ToolDef, 0, len(ts))
	for _, tl := range ts {
		if d, ok := t.def(tl); ok {
			out = append(out, d)
		}
	}
	return out
}

// Def implements executor.Dynamic.
func (t *mcpTools) Def(name string) (executor.ToolDef, bool) {
	for _, tl := range t.tools() {
		if tl.Name == name {
			return t.def(tl)
		}
	}
	return executor.ToolDef{}, false
}

// def is the definition of one server tool. A writable server's tools
// are all mutating and workspace-wide: opx cannot know which paths a
// server's tool changes, and a server's readOnlyHint is its own claim,
// recorded but never trusted for that, so each call gets a workspace
// snapshot first (Chronicle's incremental snapshot, then the diff). The
// hint only tells Shield to judge the tool's paths as reads
// (ToolDef.ReadOnlyHint); a rerun takes it from the recorded listing, as
// it takes the tool (replay_mcp.go, mcp_proxy_replay.go).
func (t *mcpTools) def(tl mcp.Tool) (executor.ToolDef, bool) {
	server, _, ok := mcp.SplitToolName(tl.Name)
	if !ok {
		return executor.ToolDef{}, false
	}
	schema := tl.InputSchema
	if !jsonObject(schema) {
		schema = json.RawMessage(`{"type":"object"}`)
	}
	mut := t.writable(server)
	return executor.ToolDef{Name: tl.Name, Description: mcpDescription(server, tl.Description), InputSchema: schema,
		Group: GroupMCPPrefix + server, Mutating: mut, WorkspaceWide: mut, ReadOnlyHint: tl.ReadOnlyHint, UntrustedResult: true}, true
}

// mcpDescription is what the model is told of a server's tool: the
// server's description, bounded, and whose tool it is.
func mcpDescription(server, desc string) string {
	desc = strings.ToValidUTF8(desc, "\uFFFD")
	if len(desc) > maxMCPDescription {
		desc = clip(desc, maxMCPDescription) + " (cut)"
	}
	if desc == "" {
		return "A tool of MCP server " + server + "."
	}
	return desc + "\n(a tool of MCP server " + server + ")"
}

// jsonObject reports whether b is one JSON object.
func jsonObject(b json.RawMessage) bool {
	var m map[string]json.RawMessage
	return len(b) > 0 && json.Unmarshal(b, &m) == nil && m != nil
}

// Execute implements executor.Executor: the server runs the call; no
// answer (it died, timed out, answered nonsense) is a failed call.
func (t *mcpTools) Execute(ctx context.Context, c executor.Call) executor.Result {
	if t.call == nil {
		return executor.Errorf("opx: %s is not served here", c.Tool)
	}
	res, err := t.call(ctx, c.ID, c.Tool, c.Args)
	if err != nil {
		// The error names the server and what went wrong (engine/mcp).
		if ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
			return executor.Errorf("no answer from the MCP server: %v (%v)", err, ctx.Err())
		}
		return executor.Errorf("no answer from the MCP server: %v", err)
	}
	text := res.Text
	if !utf8.ValidString(text) {
		text = strings.ToValidUTF8(text, "\uFFFD")
	}
	if res.Truncated {
		text += fmt.Sprintf("\n(opx: the result was cut at %d bytes)", mcp.MaxResultBytes)
	}
	return executor.Result{Content: text, IsError: res.IsError, Truncated: res.Truncated}
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
				Restarts: int64(s.Restarts), LastError: clip(strings.ToValidUTF8(s.LastError, "\uFFFD"), 1024)}
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
