package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/opx-dev/opx/cli"
	"github.com/opx-dev/opx/replay/replaytest"
)

// mcpLedger writes the MCP scene as a real ledger file and returns its
// path and seqs.
func mcpLedger(t *testing.T) (string, map[string]uint64) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ledger.db")
	return path, replaytest.Write(t, path, replaytest.MCPScene())
}

// TestReview_MCP: the review commands over a ledger with MCP servers and
// a proxy session: it verifies strictly; replay shows the MCP calls with
// Shield's finding and the servers' lives in the turn; report shows the
// finding; metrics counts the calls and lives per server; what-if
// re-judges the MCP calls under another policy.
func TestReview_MCP(t *testing.T) {
	path, seq := mcpLedger(t)
	run(t, "ledger", "verify", "--strict", "--ledger", path).wantCode(t, cli.ExitOK)

	r := run(t, "replay", replaytest.MCPSession, "--ledger", path)
	r.wantCode(t, cli.ExitOK)
	r.wantOut(t, "mcp__fs__read_text_file {\"path\":\"notes.txt\"} → completed", "result flagged by Shield (prompt-injection)",
		"the agent got it behind a warning", "mcp__fs__write_file {\"content\":\"done\",\"path\":\"out.txt\"} → failed",
		"MCP server fs sent malformed (12 bytes)", "MCP server fs (instance 1, pid 200) exited, crashed: signal killed; restarted in 500 ms",
		"MCP server fs started (instance 2, pid 201)")
	if i, j := seqAt(r.stdout, seq["c1.done"]), seqAt(r.stdout, seq["c1.flagged"]); i < 0 || j < i {
		t.Errorf("the finding (#%d) does not follow the execution (#%d):\n%s", seq["c1.flagged"], seq["c1.done"], r.stdout)
	}
	// The finding is in the totals and listed after them, as blocked
	// calls are: a reader of the summary sees it without the tree.
	r.wantOut(t, "1 failed, 1 result flagged;", "result flagged by Shield:\n  #"+strconv.FormatUint(seq["c1.flagged"], 10)+" mcp__fs__read_text_file")
	p := run(t, "replay", replaytest.ProxySession, "--ledger", path)
	p.wantCode(t, cli.ExitOK)
	p.wantOut(t, "MCP client \"inspector-cli\" 0.16.0 connected, in front of fs", "MCP client asked tools/list (request 1", "MCP tools/list answered")

	rep := run(t, "report", "-o", "-", "--no-workspace", "--ledger", path, replaytest.MCPSession)
	rep.wantCode(t, cli.ExitOK)
	rep.wantOut(t, `<span class="d-block">result flagged</span> by Shield (<code>prompt-injection</code>)`,
		`<h2>Results Shield flagged (1)</h2>`, `<span class="d-block">1 with a result Shield flagged</span>`)
	if i, j := strings.Index(rep.stdout, `id="flagged"`), strings.Index(rep.stdout, `id="summary"`); i < 0 || j < i {
		t.Errorf("the flagged box is not above the summary")
	}

	m := run(t, "metrics", "--ledger", path)
	m.wantCode(t, cli.ExitOK)
	m.wantOut(t, "MCP SERVERS", "fs                             2       1        1")
	var mj struct {
		MCP []struct {
			Server                                                        string
			Calls, Failed, Flagged, Started, Exited, Crashed, StartFailed uint64
			ProtocolErrors                                                uint64 `json:"protocol_errors"`
		} `json:"mcp_servers"`
	}
	if err := json.Unmarshal([]byte(run(t, "metrics", "--json", "--ledger", path).stdout), &mj); err != nil {
		t.Fatal(err)
	}
	if len(mj.MCP) != 2 || mj.MCP[0].Server != "bad" || mj.MCP[1].Server != "fs" {
		t.Fatalf("mcp_servers %+v", mj.MCP)
	}
	// fs: two calls (one failed), one flagged; started twice by the
	// engine and once for the proxy; exited three times, crashed once.
	if fs := mj.MCP[1]; fs.Calls != 2 || fs.Failed != 1 || fs.Flagged != 1 || fs.Started != 3 || fs.Exited != 3 || fs.Crashed != 1 || fs.ProtocolErrors != 1 {
		t.Errorf("fs %+v", fs)
	}

	policy := filepath.Join(t.TempDir(), "no-writes.yaml")
	if err := os.WriteFile(policy, []byte("version: 1\ndefault: allow\ndeny:\n  - name: no-mcp-writes\n    tools: [\"mcp__*__write*\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w := run(t, "replay", replaytest.MCPSession, "--policy", policy, "--json", "--ledger", path)
	w.wantCode(t, cli.ExitOK)
	var wi struct {
		Changes []struct {
			ProposalSeq uint64 `json:"proposal_seq"`
			Tool        string `json:"tool"`
			New         struct{ Decision, Rule string }
		} `json:"changes"`
	}
	if err := json.Unmarshal([]byte(w.stdout), &wi); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range wi.Changes {
		if c.ProposalSeq == seq["c2.proposed"] && c.New.Decision == "block" && c.New.Rule == "policy:no-mcp-writes" {
			found = true
		}
	}
	if !found {
		t.Errorf("what-if does not block c2 under a policy denying mcp__*__write*: %s", w.stdout)
	}
}
