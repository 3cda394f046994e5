package cli_test

import (
	"strings"
	"testing"

	"github.com/opx-dev/opx/cli"
	"github.com/opx-dev/opx/replay/replaytest"
)

// TestReplay_SubAgents: the timeline shows each sub-agent under the
// parent's spawn call, its interleaved entries grouped and in order, with
// its own calls, verdicts and approvals (naming it), its end and where
// the parent collected its result.
func TestReplay_SubAgents(t *testing.T) {
	path, seq := subAgentLedger(t, nil)
	r := run(t, "replay", replaytest.Session, "--ledger", path)
	r.wantCode(t, cli.ExitOK)
	a, b := replaytest.SubA, replaytest.SubB
	r.wantOut(t, "sub-agent "+a+" → completed: \"summarise README.md\"; tools read_file; at most 8 rounds, 1 min 0 s",
		"sub-agent "+b+" → cancelled",
		"approval ap_1 asked by sub-agent "+b,
		"cancelled by the parent's call c4",
		"FAILED (crashed)", "TIMED OUT at its 2.0 s limit",
		"the parent collected the result (call c3)",
		"[sub-agent "+b+"] write_file",
		"4 sub-agents (1 completed, 1 failed, 1 cancelled, 1 timed out), whose calls are counted above")
	if t.Failed() {
		return
	}
	// Grouped: everything of A between its head and B's head, in order.
	out := r.stdout
	headA, headB := strings.Index(out, "sub-agent "+a+" →"), strings.Index(out, "sub-agent "+b+" →")
	for _, name := range []string{"a.process", "a.c1.proposed", "a.c1.verdict", "a.c1.exec", "ra2.request", "a.completed", "c3.result"} {
		i := seqAt(out, seq[name])
		if i < headA || i > headB {
			t.Errorf("%s (#%d) is not in A's subtree:\n%s", name, seq[name], out)
		}
	}
	last := 0
	for _, name := range []string{"a.process", "ra1.request", "a.c1.proposed", "a.c1.verdict", "a.c1.exec", "ra2.request", "a.completed", "c3.result"} {
		i := seqAt(out[headA:], seq[name])
		if i < last {
			t.Errorf("%s is out of order in A's subtree", name)
		}
		last = i
	}

	// JSON: the same tree.
	j := run(t, "replay", replaytest.Session, "--json", "--ledger", path)
	j.wantCode(t, cli.ExitOK)
	tl := j.jsonObject(t)["timeline"].(map[string]any)
	calls := tl["turns"].([]any)[0].(map[string]any)["tool_calls"].([]any)
	spawn := calls[0].(map[string]any)
	sub, ok := spawn["subagent"].(map[string]any)
	if !ok || sub["subagent_id"] != a || sub["status"] != "completed" {
		t.Fatalf("the spawn call c1 has no sub-agent %s: %v", a, spawn)
	}
	turn := sub["turns"].([]any)[0].(map[string]any)
	if n := len(turn["tool_calls"].([]any)); n != 1 || sub["end"].(map[string]any)["result"] != replaytest.ResultA {
		t.Errorf("sub-agent %s in JSON: %d calls, end %v", a, n, sub["end"])
	}
	if tl["totals"].(map[string]any)["subagents"].(map[string]any)["spawned"].(jsonNumber).String() != "4" {
		t.Errorf("totals %v", tl["totals"])
	}
}

// seqAt is where out first shows entry seq ("#N" not followed by a
// digit), -1 if nowhere.
func seqAt(out string, seq uint64) int {
	tag := "#" + utoa(seq)
	for i := 0; ; {
		j := strings.Index(out[i:], tag)
		if j < 0 {
			return -1
		}
		end := i + j + len(tag)
		if end == len(out) || out[end] < '0' || out[end] > '9' {
			return i + j
		}
		i = end
	}
}
