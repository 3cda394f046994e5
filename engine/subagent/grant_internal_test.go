package subagent

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/opx-dev/opx/engine/executor"
	"github.com/opx-dev/opx/engine/mcp"
)

// mcpServers offers the tools of a read-only MCP server "ro" and a
// writable one "rw", as the engine's MCP source defines them: each in
// its server's group, a writable server's mutating.
type mcpServers struct{}

func (mcpServers) Tools() []executor.ToolDef {
	return []executor.ToolDef{
		{Name: mcp.ToolName("ro", "read"), Description: "d", InputSchema: json.RawMessage(`{"type":"object"}`), Group: mcp.GroupPrefix + "ro", UntrustedResult: true},
		{Name: mcp.ToolName("rw", "write"), Description: "d", InputSchema: json.RawMessage(`{"type":"object"}`), Group: mcp.GroupPrefix + "rw",
			Mutating: true, WorkspaceWide: true, UntrustedResult: true},
	}
}

func (s mcpServers) Def(name string) (executor.ToolDef, bool) {
	for _, d := range s.Tools() {
		if d.Name == name {
			return d, true
		}
	}
	return executor.ToolDef{}, false
}

func (mcpServers) Execute(_ context.Context, c executor.Call) executor.Result {
	return executor.Errorf("%s is not run here", c.Tool)
}

// mcpRegistry is a registry with the memory tools and the MCP tools of a
// read-only server "ro" and a writable server "rw".
func mcpRegistry(t *testing.T) *executor.Registry {
	t.Helper()
	r, err := executor.NewRegistry(executor.NewMemory(nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.AddDynamic(mcp.ToolPrefix, mcpServers{}); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestMCPTools_NotGrantedByDefault: a sub-agent gets an MCP tool only
// when it is asked for (by name or group).
func TestMCPTools_NotGrantedByDefault(t *testing.T) {
	tools := mcpRegistry(t)
	names := func(defs []executor.ToolDef) []string {
		var out []string
		for _, d := range defs {
			out = append(out, d.Name)
		}
		return out
	}
	defs, err := grant(tools, nil)
	if err != nil || slices.ContainsFunc(names(defs), func(n string) bool { return strings.HasPrefix(n, "mcp__") }) {
		t.Errorf("default grant %v, %v", names(defs), err)
	}
	defs, err = grant(tools, []string{"mcp:ro", "mcp__rw__write"})
	if err != nil || !slices.Equal(names(defs), []string{"mcp__ro__read", "mcp__rw__write"}) {
		t.Errorf("asked grant %v, %v", names(defs), err)
	}
}
