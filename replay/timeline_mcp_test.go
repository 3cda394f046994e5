package replay_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/replay"
	"github.com/opx-dev/opx/replay/replaytest"
)

// TestBuild_MCP: the calls of MCP tools are tool calls like any other,
// with Shield's finding in a result attached to its call; the engine's
// MCP servers' lives show in the turn they happened during; a proxy
// session shows its client, its upstream and what it passed through.
func TestBuild_MCP(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	seqs := replaytest.Write(t, path, replaytest.MCPScene())
	l, err := ledger.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	tl := mustBuild(t, l, replaytest.MCPSession, replay.Options{})
	if len(tl.Problems) != 0 {
		t.Fatalf("problems: %v", tl.Problems)
	}
	c1 := callByID(t, tl, "c1")
	if c1.Outcome != replay.OutcomeCompleted || c1.Snapshot == nil || c1.Snapshot.Kind != "workspace" {
		t.Errorf("c1 %+v", c1)
	}
	if f := c1.Flagged; f == nil || f.Seq != seqs["c1.flagged"] || f.Rule != "prompt-injection" || f.Action != "annotated" {
		t.Errorf("c1 flagged %+v", c1.Flagged)
	}
	var steps []uint64
	for _, st := range c1.Steps() {
		steps = append(steps, st.Seq)
	}
	if !slices.Contains(steps, seqs["c1.flagged"]) || !slices.IsSorted(steps) {
		t.Errorf("c1 steps %v", steps)
	}
	if c2 := callByID(t, tl, "c2"); c2.Outcome != replay.OutcomeFailed || c2.Flagged != nil {
		t.Errorf("c2 %+v", c2)
	}
	// The flagged result is counted in the totals (the headline of a
	// session whose MCP answer carried an injection), and listed.
	if tl.Totals.Flagged != 1 || len(tl.Flagged()) != 1 || tl.Flagged()[0] != c1 {
		t.Errorf("totals flagged %d, Flagged() %v: want c1 once", tl.Totals.Flagged, tl.Flagged())
	}
	// The server's protocol error, death and restart while the turn ran
	// are in it; its start before the session and its stop after are not.
	where := map[uint64]string{}
	for _, ev := range tl.Turns[0].Events {
		where[ev.Seq] = ev.Summary
	}
	for _, name := range []string{"fs.protocol", "fs.crashed", "fs.restarted", "fs.relisted"} {
		if where[seqs[name]] == "" {
			t.Errorf("%s (seq %d) is not in the turn: %v", name, seqs[name], where)
		}
	}
	if s := where[seqs["fs.crashed"]]; !strings.Contains(s, "MCP server fs (instance 1, pid 200) exited, crashed: signal killed; restarted in 500 ms") {
		t.Errorf("crash summary %q", s)
	}
	for _, ev := range append(tl.Events, tl.Turns[0].Events...) {
		if ev.Seq == seqs["fs.started"] || ev.Seq == seqs["fs.stopped"] || ev.Seq == seqs["bad.failed"] {
			t.Errorf("%s outside the session's span is in its timeline", ev.Type)
		}
	}

	p := mustBuild(t, l, replaytest.ProxySession, replay.Options{})
	if p.Mode != "mcp-proxy" || len(p.Problems) != 0 || len(p.Turns) != 0 {
		t.Fatalf("proxy session: mode %s, %d turns, problems %v", p.Mode, len(p.Turns), p.Problems)
	}
	var got []string
	for _, ev := range p.Events {
		got = append(got, ev.Summary)
	}
	want := []string{
		`session created (mode mcp-proxy), title "mcp-proxy: inspector"`,
		`MCP client "inspector-cli" 0.16.0 connected, in front of fs: node /opt/mcp/server-filesystem/dist/index.js /nonexistent/ws; client capabilities: elicitation`,
		`MCP server fs started (instance 1, pid 300): node /opt/mcp/server-filesystem/dist/index.js /nonexistent/ws; workspace writable, no network`,
		`MCP server fs offers 2 tool(s): mcp__fs__read_text_file, mcp__fs__write_file`,
		`MCP client asked tools/list (request 1, 2 bytes of params)`,
		`MCP tools/list answered (request 1, 346 bytes, 3 ms)`,
		`MCP server fs (instance 1, pid 300) stopped by opx, as its session or the engine ended (exit 0)`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("proxy events\n got %q\nwant %q", got, want)
	}
}
