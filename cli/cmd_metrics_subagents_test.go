package cli_test

import (
	"testing"

	"github.com/opx-dev/opx/cli"
	"github.com/opx-dev/opx/replay/replaytest"
)

// TestMetrics_SubAgents: opx metrics counts the sub-agents by how they
// ended and their share of the totals; opx sessions counts them per
// session.
func TestMetrics_SubAgents(t *testing.T) {
	path, _ := subAgentLedger(t, nil)
	r := run(t, "metrics", "--ledger", path)
	r.wantCode(t, cli.ExitOK)
	r.wantOut(t, "SUB-AGENTS", "      4          1       1          1          1        0", "failed: crashed 1",
		"their share of the tables above: verdicts 1 allow, 1 escalate, 1 block; 4 model calls",
		"2 tool calls executed (0 failed, 0 exit≠0, avg 451 ms)")
	j := run(t, "metrics", "--json", "--ledger", path).jsonObject(t)["subagents"].(map[string]any)
	if j["spawned"].(jsonNumber).String() != "4" || j["failed_by"].(map[string]any)["crashed"].(jsonNumber).String() != "1" {
		t.Errorf("metrics --json subagents: %v", j)
	}

	s := run(t, "sessions", "--ledger", path)
	s.wantCode(t, cli.ExitOK)
	s.wantOut(t, "SUB-AGENTS", replaytest.Session, "1 of 4 ok")
	ss := run(t, "sessions", "--json", "--ledger", path).jsonObject(t)["sessions"].([]any)[0].(map[string]any)
	if sa := ss["subagents"].(map[string]any); sa["cancelled"].(jsonNumber).String() != "1" || ss["messages"].(jsonNumber).String() != "2" {
		t.Errorf("sessions --json: %v", ss)
	}
}
