package engine

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/opx-dev/opx/engine/executor"
	"github.com/opx-dev/opx/engine/judge"
	"github.com/opx-dev/opx/engine/mcp"
	"github.com/opx-dev/opx/engine/otr"
	"github.com/opx-dev/opx/ledger/event"
)

// mcpRegistry is a registry with the memory tools and the MCP tools of a
// read-only server "ro" and a writable server "rw".
func mcpRegistry(t *testing.T) *executor.Registry {
	t.Helper()
	r, err := executor.NewRegistry(executor.NewMemory(nil))
	if err != nil {
		t.Fatal(err)
	}
	tool := func(server, name string) mcp.Tool {
		return mcp.Tool{MCPTool: event.MCPTool{Name: mcp.ToolName(server, name), Tool: name}, Description: "d",
			InputSchema: json.RawMessage(`{"type":"object"}`)}
	}
	src := &mcp.Source{List: func() []mcp.Tool { return []mcp.Tool{tool("ro", "read"), tool("rw", "write")} },
		Writable: func(s string) bool { return s == "rw" }}
	if err := r.AddDynamic(mcp.ToolPrefix, src); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestOTR_MCPToolsBlocked: off the record, no MCP tool runs, a read-only
// server's included.
func TestOTR_MCPToolsBlocked(t *testing.T) {
	r := mcpRegistry(t)
	def, ok := r.Def("mcp__ro__read")
	if why := otr.Mutates(judge.Proposal{Tool: def.Name, Def: def, Known: ok}); !strings.Contains(why, "MCP server") {
		t.Errorf("otr.Mutates = %q", why)
	}
}
