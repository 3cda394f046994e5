package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/opx-dev/opx/engine/executor"
)

// maxMCPDescription bounds the description of an MCP tool offered to the
// model: it is the server's text, sent with every model call.
const maxMCPDescription = 2 << 10

// Source offers MCP servers' tools to an executor registry (a dynamic
// source: Registry.AddDynamic under ToolPrefix): the engine's own servers'
// (the engine's Manager), an mcp-proxy session's upstream's
// (engine/mcpproxy). In replay mode it offers the tools the record says
// were offered (engine/redrive/mcp.go) and is never asked to execute.
type Source struct {
	// List lists the tools as of now.
	List func() []Tool
	// Writable says whether a server may change the workspace.
	Writable func(server string) bool
	// Call runs one (nil in replay mode).
	Call func(ctx context.Context, callID, name string, args json.RawMessage) (Result, error)
}

// Tools implements executor.Executor.
func (t *Source) Tools() []executor.ToolDef {
	ts := t.List()
	out := make([]executor.ToolDef, 0, len(ts))
	for _, tl := range ts {
		if d, ok := t.def(tl); ok {
			out = append(out, d)
		}
	}
	return out
}

// Def implements executor.Dynamic.
func (t *Source) Def(name string) (executor.ToolDef, bool) {
	for _, tl := range t.List() {
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
// it takes the tool (engine/redrive/mcp.go, engine/mcpproxy/replay.go).
func (t *Source) def(tl Tool) (executor.ToolDef, bool) {
	server, _, ok := SplitToolName(tl.Name)
	if !ok {
		return executor.ToolDef{}, false
	}
	schema := tl.InputSchema
	if !jsonObject(schema) {
		schema = json.RawMessage(`{"type":"object"}`)
	}
	mut := t.Writable(server)
	return executor.ToolDef{Name: tl.Name, Description: mcpDescription(server, tl.Description), InputSchema: schema,
		Group: GroupPrefix + server, Mutating: mut, WorkspaceWide: mut, ReadOnlyHint: tl.ReadOnlyHint, UntrustedResult: true}, true
}

// mcpDescription is what the model is told of a server's tool: the
// server's description, bounded, and whose tool it is.
func mcpDescription(server, desc string) string {
	desc = strings.ToValidUTF8(desc, "\uFFFD")
	if len(desc) > maxMCPDescription {
		desc = cutDescription(desc, maxMCPDescription) + " (cut)"
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
func (t *Source) Execute(ctx context.Context, c executor.Call) executor.Result {
	if t.Call == nil {
		return executor.Errorf("opx: %s is not served here", c.Tool)
	}
	res, err := t.Call(ctx, c.ID, c.Tool, c.Args)
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
		text += fmt.Sprintf("\n(opx: the result was cut at %d bytes)", MaxResultBytes)
	}
	return executor.Result{Content: text, IsError: res.IsError, Truncated: res.Truncated}
}

// cutDescription cuts s to at most n bytes on a character boundary (the
// engine's cut: the caller says it was cut).
func cutDescription(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
