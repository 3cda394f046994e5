package engine

import (
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
// the manager lists them), rebuilt from each recorded listing as the
// live engine built them (mcp.ToolsFromListing: the same checks, cuts
// and schema hashes); mutating as recorded.
func (s *replayState) mcpTools() []mcp.Tool {
	var out []mcp.Tool
	for _, l := range s.mcpListings() {
		writable := false
		for _, t := range l.Tools {
			writable = writable || t.Mutating
		}
		tools, _, err := mcp.ToolsFromListing(l.Server, writable, l.Listing)
		if err != nil {
			s.offRecordf("the listing of MCP server %s (entry %d) cannot be read: %v", l.Server, l.Seq, err)
			continue
		}
		out = append(out, tools...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
