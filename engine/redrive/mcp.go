package redrive

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
// the recorded result is served (pipeline.go): the server is never
// called.

// MCPWritable implements engine.ReplayMode: whether server's recorded
// tools were mutating (it ran writable).
func (s *replayState) MCPWritable(server string) bool {
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

// mcpListings are the listings in force for the message being fed, and
// the tools its engine.process_request names (nil: no message).
func (s *replayState) mcpListings() []*rerun.MCPListing {
	l, _ := s.mcpInForce()
	return l
}

func (s *replayState) mcpInForce() ([]*rerun.MCPListing, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.message
	if m == nil {
		if len(s.rec.Messages) == 0 {
			return nil, nil
		}
		m = s.rec.Messages[0]
	}
	return m.MCP, m.Tools
}

// mcpTools are the tools of the listings in force, sorted by name (as
// the manager lists them), rebuilt from each recorded listing as the
// live engine built them (mcp.ToolsFromListing: the same checks, cuts
// and schema hashes); mutating as recorded.
//
// Only the tools the message's engine.process_request names are offered:
// a server that was down (exited, or restarting) when the live engine
// chose the message's tools offered none, whatever its last listing.
func (s *replayState) mcpTools() []mcp.Tool {
	var out []mcp.Tool
	listings, names := s.mcpInForce()
	offered := make(map[string]bool, len(names))
	for _, n := range names {
		offered[n] = true
	}
	for _, l := range listings {
		writable := false
		for _, t := range l.Tools {
			writable = writable || t.Mutating
		}
		tools, _, err := mcp.ToolsFromListing(l.Server, writable, l.Listing)
		if err != nil {
			s.offRecordf("the listing of MCP server %s (entry %d) cannot be read: %v", l.Server, l.Seq, err)
			continue
		}
		for _, t := range tools {
			if offered[t.Name] {
				out = append(out, t)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// recordedReadOnlyHint says whether the listing recorded in force for
// proposal p marked its MCP tool read-only (readOnlyHint): what the live
// engine judged it by (mcp.Source's def), never asked of a server now.
// The listing is the proxy session's last before the proposal, or the
// one its message's engine.process_request was handed with.
func recordedReadOnlyHint(rec *rerun.Recording, p *rerun.Proposal) bool {
	server, _, ok := mcp.SplitToolName(p.Tool)
	if !ok {
		return false
	}
	var listings []*rerun.MCPListing
	if rec.Proxy != nil {
		if l := rec.Proxy.Listing(p.Seq); l != nil {
			listings = append(listings, l)
		}
	} else {
		for _, m := range rec.Messages {
			if m.ID == p.MessageID {
				listings = m.MCP
			}
		}
	}
	for _, l := range listings {
		if l.Server != server {
			continue
		}
		for _, t := range l.Tools {
			if t.Name == p.Tool {
				return t.ReadOnlyHint
			}
		}
	}
	return false
}
