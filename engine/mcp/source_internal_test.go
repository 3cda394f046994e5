package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/opx-dev/opx/engine/executor"
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
	tool := func(server, name string) Tool {
		return Tool{MCPTool: event.MCPTool{Name: ToolName(server, name), Tool: name}, Description: "d",
			InputSchema: json.RawMessage(`{"type":"object"}`)}
	}
	src := &Source{List: func() []Tool { return []Tool{tool("ro", "read"), tool("rw", "write")} },
		Writable: func(s string) bool { return s == "rw" }}
	if err := r.AddDynamic(ToolPrefix, src); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestMCPDefs: a writable server's tools are mutating and workspace-wide
// (whatever readOnlyHint says), a read-only server's are not; all are in
// their server's group, with a result Shield reads.
func TestMCPDefs(t *testing.T) {
	r := mcpRegistry(t)
	ro, _ := r.Def("mcp__ro__read")
	rw, _ := r.Def("mcp__rw__write")
	if ro.Mutating || ro.WorkspaceWide || ro.Group != "mcp:ro" || !ro.UntrustedResult {
		t.Errorf("read-only server's tool %+v", ro)
	}
	if !rw.Mutating || !rw.WorkspaceWide || rw.Group != "mcp:rw" || !rw.UntrustedResult {
		t.Errorf("writable server's tool %+v", rw)
	}
	if !strings.Contains(ro.Description, "MCP server ro") {
		t.Errorf("description %q", ro.Description)
	}
}

// TestMCPTools_Execute: what the model gets of a server's answer: its
// text, valid UTF-8, the cut said; no answer is a failed call naming why.
func TestMCPTools_Execute(t *testing.T) {
	var res Result
	var err error
	src := &Source{Call: func(context.Context, string, string, json.RawMessage) (Result, error) { return res, err }}
	res = Result{Text: "ok \xff\xfe", Truncated: true}
	got := src.Execute(context.Background(), executor.Call{Tool: "mcp__x__y"})
	if got.IsError || !strings.HasPrefix(got.Content, "ok \uFFFD") || !strings.Contains(got.Content, "the result was cut") || !got.Truncated {
		t.Errorf("%+v", got)
	}
	res, err = Result{}, ErrNotRunning
	if got := src.Execute(context.Background(), executor.Call{Tool: "mcp__x__y"}); !got.IsError || !strings.Contains(got.Content, "not running") {
		t.Errorf("%+v", got)
	}
	res, err = Result{Text: "bad path", IsError: true}, nil
	if got := src.Execute(context.Background(), executor.Call{Tool: "mcp__x__y"}); !got.IsError || got.Content != "bad path" {
		t.Errorf("%+v", got)
	}
}
