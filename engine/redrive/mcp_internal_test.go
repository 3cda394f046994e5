package redrive

import (
	"testing"

	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/replay/rerun"
)

// TestReplayMCP_OffersWhatTheMessageNamed: a rerun offers a message the
// MCP tools its engine.process_request named, from each server's last
// listing. A server that exited (or was restarting) when the live engine
// chose the tools offered none, even if its restart's listing was
// recorded before the process_request; one whose exit was recorded after
// the choice offered its tools (a CI failure of TestEngine_MCP_BadServers:
// the rerun offered a restarting server's tools).
func TestReplayMCP_OffersWhatTheMessageNamed(t *testing.T) {
	listing := func(server string) *rerun.MCPListing {
		return &rerun.MCPListing{MCPToolsListed: event.MCPToolsListed{Server: server},
			Listing: []byte(`{"tools":[{"name":"echo","inputSchema":{"type":"object"}},{"name":"other","inputSchema":{"type":"object"}}]}`)}
	}
	msg := &rerun.Message{ID: "m1", MCP: []*rerun.MCPListing{listing("down"), listing("up")},
		Tools: []string{"read_file", "mcp__up__echo", "mcp__up__other"}}
	s := &replayState{rec: &rerun.Recording{Messages: []*rerun.Message{msg}}}
	var got []string
	for _, tool := range s.mcpTools() {
		got = append(got, tool.Name)
	}
	if len(got) != 2 || got[0] != "mcp__up__echo" || got[1] != "mcp__up__other" {
		t.Fatalf("offered %q, want the up server's two tools only", got)
	}
	msg.Tools = []string{"mcp__down__echo"}
	got = nil
	for _, tool := range s.mcpTools() {
		got = append(got, tool.Name)
	}
	if len(got) != 1 || got[0] != "mcp__down__echo" {
		t.Fatalf("offered %q, want the one named", got)
	}
}
