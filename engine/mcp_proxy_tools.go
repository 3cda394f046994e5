package engine

import (
	"context"
	"errors"

	"github.com/opx-dev/opx/engine/executor"
	"github.com/opx-dev/opx/engine/mcp"
)

// proxyTools is an mcp-proxy session's upstream as an executor: its tools
// under their namespaced names (mcp__<server>__<tool>), executed by the
// upstream. An executed call's result is kept for the call's handler,
// which hands the client the upstream's CallToolResult as received.
type proxyTools struct {
	ps   *proxySession
	defs []executor.ToolDef
}

// proxyDefs are the tool definitions of a server's tools. A writable
// server may change anything in the workspace, so each of its calls is
// workspace-wide mutating (a workspace snapshot first, the difference
// after); the server's readOnlyHint is recorded, never trusted.
func proxyDefs(server string, tools []mcp.Tool, writable bool) []executor.ToolDef {
	defs := make([]executor.ToolDef, 0, len(tools))
	for _, t := range tools {
		defs = append(defs, executor.ToolDef{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema,
			Group: "mcp:" + server, Mutating: writable, WorkspaceWide: writable})
	}
	return defs
}

// Tools implements executor.Executor.
func (t *proxyTools) Tools() []executor.ToolDef { return t.defs }

// Execute implements executor.Executor: the upstream runs the call.
func (t *proxyTools) Execute(ctx context.Context, c executor.Call) executor.Result {
	_, tool, ok := mcp.SplitToolName(c.Tool)
	if !ok {
		return executor.Errorf("%q is not an MCP tool's name", c.Tool)
	}
	r, err := t.ps.conn.CallTool(ctx, c.ID, tool, c.Args)
	if err != nil {
		if errors.Is(err, mcp.ErrNotRunning) {
			return executor.Errorf("the MCP server %s is not running: the call was not made", t.ps.upstream)
		}
		return executor.Errorf("the MCP server %s gave no answer: %v", t.ps.upstream, err)
	}
	t.ps.keep(c.ID, r)
	return executor.Result{Content: r.Text, IsError: r.IsError, Truncated: r.Truncated}
}
