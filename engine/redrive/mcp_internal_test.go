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

// TestReplayMCP_ReadOnlyHintFromTheRecord: a rerun's tools and what-if's
// proposals take an MCP tool's readOnlyHint from the listing recorded in
// force (the message's, or the proxy session's last before the call),
// never from a server; the tool stays mutating (snapshotted first).
func TestReplayMCP_ReadOnlyHintFromTheRecord(t *testing.T) {
	const listing = `{"tools":[{"name":"read_text_file","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}},` +
		`{"name":"write_file","inputSchema":{"type":"object"}}]}`
	tools := []event.MCPTool{{Name: "mcp__fs__read_text_file", Tool: "read_text_file", Mutating: true, ReadOnlyHint: true},
		{Name: "mcp__fs__write_file", Tool: "write_file", Mutating: true}}
	l := &rerun.MCPListing{Seq: 5, MCPToolsListed: event.MCPToolsListed{Server: "fs", Tools: tools}, Listing: []byte(listing)}
	msg := &rerun.Message{ID: "m1", MCP: []*rerun.MCPListing{l}, Tools: []string{"mcp__fs__read_text_file", "mcp__fs__write_file"}}
	rec := &rerun.Recording{Messages: []*rerun.Message{msg}}
	// A rerun's definitions: the engine's tool source takes the tools and
	// whether a server is writable from replay mode (engine.New),
	// and makes each definition's ReadOnlyHint the tool's.
	s := &replayState{rec: rec}
	if !s.MCPWritable("fs") {
		t.Errorf("the fs server is not writable in the rerun: its tools would not be snapshotted")
	}
	offered := map[string]bool{}
	for _, tl := range s.MCPTools() {
		offered[tl.Name] = tl.ReadOnlyHint
	}
	for name, hint := range map[string]bool{"mcp__fs__read_text_file": true, "mcp__fs__write_file": false} {
		if got, ok := offered[name]; !ok || got != hint {
			t.Errorf("rerun's %s: offered %v with readOnlyHint %v, want readOnlyHint %v", name, ok, got, hint)
		}
	}
	// What-if's, for the session's agent and for a proxy session.
	for _, c := range []struct {
		name string
		rec  *rerun.Recording
		p    *rerun.Proposal
		want bool
	}{
		{"the message's read", rec, &rerun.Proposal{Seq: 9, MessageID: "m1", Tool: "mcp__fs__read_text_file"}, true},
		{"the message's write", rec, &rerun.Proposal{Seq: 9, MessageID: "m1", Tool: "mcp__fs__write_file"}, false},
		{"another message", rec, &rerun.Proposal{Seq: 9, MessageID: "m2", Tool: "mcp__fs__read_text_file"}, false},
		{"not an MCP tool", rec, &rerun.Proposal{Seq: 9, MessageID: "m1", Tool: "read_file"}, false},
		{"the proxy's read", &rerun.Recording{Proxy: &rerun.Proxy{Listings: []*rerun.MCPListing{l}}}, &rerun.Proposal{Seq: 9, Tool: "mcp__fs__read_text_file"}, true},
		{"before the proxy's listing", &rerun.Recording{Proxy: &rerun.Proxy{Listings: []*rerun.MCPListing{l}}}, &rerun.Proposal{Seq: 4, Tool: "mcp__fs__read_text_file"}, false},
	} {
		if got := recordedReadOnlyHint(c.rec, c.p); got != c.want {
			t.Errorf("%s: readOnlyHint %v, want %v", c.name, got, c.want)
		}
	}
}
