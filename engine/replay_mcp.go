package engine

import (
	"encoding/json"
	"sort"

	"github.com/opx-dev/opx/engine/mcp"
	"github.com/opx-dev/opx/replay/rerun"
)

// MCP tools in replay mode: no server runs. The tools offered are those
// the record says the engine's servers offered when the message being
// fed arrived (their mcp.tools_listed: name, description and input
// schema from the listing, mutating as recorded), so the agent's model
// requests are the recorded ones byte for byte; Shield judges each call
// as the live engine did (a writable server's tools are mutating), and
// the recorded result is served (replay_pipeline.go): the server is never
// called.

// replayMCP points src at the record.
func (s *replayState) replayMCP(src *mcpTools) {
	src.tools = s.mcpTools
	src.writable = func(server string) bool {
		for _, l := range s.mcpListings() {
			if l.Server == server {
				for _, t := range l.Tools {
					if t.Mutating {
						return true
					}
				}
			}
		}
		return false
	}
	src.call = nil
}

// mcpListings are the listings in force for the message being fed.
func (s *replayState) mcpListings() []*rerun.MCPListing {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.message == nil {
		if len(s.rec.Messages) == 0 {
			return nil
		}
		return s.rec.Messages[0].MCP
	}
	return s.message.MCP
}

// mcpTools are the tools of the listings in force, sorted by name (as
// the manager lists them).
func (s *replayState) mcpTools() []mcp.Tool {
	var out []mcp.Tool
	for _, l := range s.mcpListings() {
		described := listedTools(l.Listing)
		for _, t := range l.Tools {
			tl := mcp.Tool{MCPTool: t}
			if d, ok := described[t.Tool]; ok {
				tl.Description, tl.InputSchema, tl.Raw = d.Description, d.InputSchema, d.raw
			}
			out = append(out, tl)
		}
	}
	sortTools(out)
	return out
}

// listedTool is a tool of a recorded tools/list answer.
type listedTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
	raw         json.RawMessage
}

// listedTools reads a recorded tools/list answer ({"tools": [...]}) by
// the server's tool names; what does not parse describes nothing.
func listedTools(listing []byte) map[string]listedTool {
	var l struct {
		Tools []json.RawMessage `json:"tools"`
	}
	out := map[string]listedTool{}
	if json.Unmarshal(listing, &l) != nil {
		return out
	}
	for _, raw := range l.Tools {
		var t listedTool
		if json.Unmarshal(raw, &t) == nil && t.Name != "" {
			if _, dup := out[t.Name]; !dup {
				t.raw = raw
				out[t.Name] = t
			}
		}
	}
	return out
}

// sortTools sorts tools by name.
func sortTools(ts []mcp.Tool) {
	sort.Slice(ts, func(i, j int) bool { return ts[i].Name < ts[j].Name })
}
