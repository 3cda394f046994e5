package mcpproxy_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opx-dev/opx/engine"
	// Its sessions, linked into the engine the rerun builds.
	_ "github.com/opx-dev/opx/engine/mcpproxy"
	"github.com/opx-dev/opx/engine/redrive"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/ledgertest"
	"github.com/opx-dev/opx/replay/replaytest"
	"github.com/opx-dev/opx/replay/rerun"
)

// proxySessionSteps is a recorded mcp-proxy session under the read-only
// policy: the client and its upstream, a tools/list passed through, an
// allowed read (answered as the upstream answered it) and a call of a
// tool the upstream does not offer (blocked), then the upstream's end.
func proxySessionSteps() []replaytest.Step {
	const session = "ses_proxy"
	ro := engine.ReadOnlyPolicy{}.PolicyHash().String()
	fsCmd := []string{"mcp-server-filesystem", "/nonexistent/ws"}
	tools := []event.MCPTool{{Name: "mcp__fs__read_text_file", Tool: "read_text_file", SchemaHash: replaytest.Action("schema", "read")},
		{Name: "mcp__fs__write_file", Tool: "write_file", SchemaHash: replaytest.Action("schema", "write")}}
	readArgs := `{"path":"notes.txt"}`
	call1, call2 := `{"arguments":{"path":"notes.txt"},"name":"read_text_file"}`, `{"arguments":{},"name":"nope"}`
	read := "mcp__fs__read_text_file"
	answer := `{"content":[{"type":"text","text":"the notes"}],"structuredContent":{"content":"the notes"}}`
	blocked := `{"content":[{"text":"blocked by Shield (read-only-policy:unknown-tool): no tool named \"mcp__fs__nope\"","type":"text"}],"isError":true}`
	s := func(p event.Payload, blobs ...[]byte) replaytest.Step {
		return replaytest.Step{Session: session, Payload: p, Blobs: blobs}
	}
	return []replaytest.Step{
		{Payload: &event.EngineStarted{Version: "test", PID: 100, Workspace: "/nonexistent/ws", ConfigHash: ro, Policy: "read-only", PolicyHash: ro,
			Provider: "scripted", Model: "m-1"}},
		s(&event.SessionCreated{Mode: "mcp-proxy", Title: "client 1 → fs"}),
		s(&event.MCPClient{ClientName: "client", ClientVersion: "1", Upstream: "fs", Command: fsCmd}),
		s(&event.MCPServerStarted{Server: "fs", Instance: 1, Command: fsCmd, PID: 300, ProtocolVersion: "2025-06-18"}),
		s(&event.MCPToolsListed{Server: "fs", Instance: 1, Tools: tools, Listing: replaytest.MCPListing, Size: int64(len(replaytest.MCPListing))}),
		s(&event.MCPRequest{RequestID: "req_1", Method: "tools/list", Params: "{}", Size: 2}),
		s(&event.MCPResponse{RequestID: "req_1", Method: "tools/list", Result: replaytest.MCPListing, Size: int64(len(replaytest.MCPListing)), DurationMS: 1}),
		s(&event.MCPRequest{RequestID: "call_1", Method: "tools/call", Params: call1, Size: int64(len(call1))}),
		s(&event.ToolProposed{CallID: "call_1", Tool: read, Arguments: readArgs, ActionHash: engine.ActionHash(read, []byte(readArgs)).String()}),
		s(&event.ShieldVerdict{CallID: "call_1", Decision: event.Allow, Tier: 0, Rule: "read-only-policy:read-only", Reason: read + " does not change the workspace",
			ActionHash: engine.ActionHash(read, []byte(readArgs)).String(), PolicyHash: ro}),
		s(&event.ExecStarted{CallID: "call_1", Tool: read, ActionHash: engine.ActionHash(read, []byte(readArgs)).String()}),
		s(&event.ExecCompleted{CallID: "call_1", Tool: read, Result: "the notes", Size: 9, DurationMS: 2, Post: []event.PostState{}}),
		s(&event.MCPResponse{RequestID: "call_1", Method: "tools/call", Result: answer, Size: int64(len(answer)), DurationMS: 3}),
		s(&event.MCPRequest{RequestID: "call_2", Method: "tools/call", Params: call2, Size: int64(len(call2))}),
		s(&event.ToolProposed{CallID: "call_2", Tool: "mcp__fs__nope", Arguments: "{}", ActionHash: engine.ActionHash("mcp__fs__nope", []byte("{}")).String()}),
		s(&event.ShieldVerdict{CallID: "call_2", Decision: event.Block, Tier: 0, Rule: "read-only-policy:unknown-tool", Reason: `no tool named "mcp__fs__nope"`,
			ActionHash: engine.ActionHash("mcp__fs__nope", []byte("{}")).String(), PolicyHash: ro}),
		s(&event.MCPResponse{RequestID: "call_2", Method: "tools/call", Result: blocked, Size: int64(len(blocked)), DurationMS: 1}),
		s(&event.MCPServerExited{Server: "fs", Instance: 1, PID: 300, Reason: "stopped"}),
		{Payload: &event.EngineStopped{Reason: "opx stop", Cause: event.StopShutdown, UptimeMS: 9000}},
	}
}

// loadProxySession writes the recorded proxy session and loads it.
func loadProxySession(t *testing.T) *rerun.Recording {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ledger.db")
	replaytest.Write(t, path, proxySessionSteps())
	ledgertest.MustVerify(t, path, event.StrictOptions())
	l, err := ledger.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	rec, err := rerun.Load(l, "ses_proxy")
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// rerunProxy reruns a proxy session: no agent.
func rerunProxy(t *testing.T, rec *rerun.Recording) *redrive.RerunReport {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rerun.db")
	rep, err := redrive.Rerun(context.Background(), redrive.RerunConfig{Recording: rec, TempDir: t.TempDir(), Logf: t.Logf, LedgerPath: path})
	if err != nil {
		t.Fatal(err)
	}
	ledgertest.MustVerify(t, path, event.StrictOptions())
	return rep
}

// TestRerun_MCPProxyIdentical: a proxy session reruns without its client,
// its upstream or an agent: each tools/call judged again and served its
// recorded result and answer, the rest copied; the upstream's life is
// served, not compared.
func TestRerun_MCPProxyIdentical(t *testing.T) {
	rec := loadProxySession(t)
	if rec.Proxy == nil || len(rec.Proxy.Steps) != 3 || len(rec.Proposals) != 2 {
		t.Fatalf("recording %+v", rec.Proxy)
	}
	rep := rerunProxy(t, rec)
	if !rep.Identical {
		d := rep.Divergence
		t.Fatalf("diverged at seq %d (%s, %s): notes %v\n%s", d.Seq, d.Type, d.Kind, rep.Notes, d.Diff)
	}
	if rep.Mode != "mcp-proxy" || rep.Uncompared != 3 || rep.Events != 14 {
		t.Errorf("mode %q, %d compared, %d uncompared", rep.Mode, rep.Events, rep.Uncompared)
	}
}

// TestRerun_MCPProxyDiverges: a verdict the recorded policy no longer
// gives, and an answer the record does not hold, show where they are.
func TestRerun_MCPProxyDiverges(t *testing.T) {
	rec := loadProxySession(t)
	rec.Engine.PolicyText = []byte("version: 1\ndefault: deny\n")
	rep := rerunProxy(t, rec)
	first := rec.Proposals[0].Verdicts[0]
	if d := rep.Divergence; d == nil || d.Seq != first.Seq || d.Type != event.TypeShieldVerdict || !strings.Contains(d.Diff, "policy:default") {
		t.Fatalf("divergence %+v, want the verdict at seq %d", d, first.Seq)
	}

	rec = loadProxySession(t)
	st := rec.Proxy.Steps[1] // call_1
	st.Result = []byte(`{"content":[{"type":"text","text":"other notes"}]}`)
	rec.Proposals[0].ResultContent = string(st.Result)
	rep = rerunProxy(t, rec)
	if d := rep.Divergence; d == nil || d.Seq != st.ResponseSeq || d.Type != event.TypeMCPResponse || !strings.Contains(d.Diff, "other notes") {
		t.Fatalf("divergence %+v, want the answer at seq %d", d, st.ResponseSeq)
	}
}
