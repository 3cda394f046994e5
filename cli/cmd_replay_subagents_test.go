package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
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
		"the parent collected the result (call c3)", "the parent learned of its end (call c4)",
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

// TestReport_SubAgents: the HTML report nests each sub-agent under its
// spawn call the same way, names the sub-agent in its approvals, blocked
// actions and verdicts, and counts the sub-agents.
func TestReport_SubAgents(t *testing.T) {
	path, _ := subAgentLedger(t, nil)
	r := run(t, "report", "-o", "-", "--no-workspace", "--ledger", path, replaytest.Session)
	r.wantCode(t, cli.ExitOK)
	a, b := replaytest.SubA, replaytest.SubB
	r.wantOut(t, `<div class="subagent" id="sub-`+a+`">`, "<b>sub-agent <code>"+a+"</code></b> → <span class=\"o-good\">completed</span>",
		"approval <code>ap_1</code> asked by sub-agent <code>"+b+"</code>",
		"cancelled</span> by the parent's call <code>c4</code>", "the parent collected the result (call <code>c3</code>)",
		"<dt>Sub-agents</dt><dd>4 spawned: 1 completed", `<span class="muted">sub-agent `+b+`</span>`, "<b>sub-agent turn 1</b>")
	// A's subtree sits inside the spawn call c1's block, before c2's.
	out := r.stdout
	if i, j, k := strings.Index(out, `id="sub-`+a+`"`), strings.Index(out, "sub-agent turn 1"), strings.Index(out, `id="sub-`+b+`"`); i < 0 || j < i || k < j {
		t.Errorf("sub-agent blocks out of place: %d %d %d", i, j, k)
	}
}

// TestWhatIf_SubAgents: --policy re-evaluates the sub-agents' proposals
// too, naming the sub-agent in each change; a restriction's block
// (subagent:not-granted) is no policy's and stays as recorded.
func TestWhatIf_SubAgents(t *testing.T) {
	path, seq := subAgentLedger(t, nil)
	policy := filepath.Join(t.TempDir(), "block.yaml")
	if err := os.WriteFile(policy, []byte("version: 1\ndefault: deny\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, "replay", replaytest.Session, "--policy", policy, "--ledger", path)
	r.wantCode(t, cli.ExitOK)
	r.wantOut(t, "1 blocked by a restriction before any tier", "[sub-agent "+replaytest.SubA+"] read_file",
		"[sub-agent "+replaytest.SubB+"] execute_command")
	if strings.Contains(r.stdout, "write_file") {
		t.Errorf("the restricted write_file is reported as a change:\n%s", r.stdout)
	}
	var out struct {
		Restricted int `json:"restricted"`
		Changes    []struct {
			ProposalSeq uint64 `json:"proposal_seq"`
			SubAgentID  string `json:"subagent_id"`
			Kind        string `json:"kind"`
		} `json:"changes"`
	}
	j := run(t, "replay", replaytest.Session, "--policy", policy, "--json", "--ledger", path)
	if err := json.Unmarshal([]byte(j.stdout), &out); err != nil {
		t.Fatal(err)
	}
	by := map[uint64]string{}
	for _, c := range out.Changes {
		by[c.ProposalSeq] = c.SubAgentID + " " + c.Kind
	}
	if out.Restricted != 1 || by[seq["a.c1.proposed"]] != replaytest.SubA+" decision" || by[seq["b.c1.proposed"]] != replaytest.SubB+" decision" ||
		by[seq["c1.proposed"]] != " decision" {
		t.Errorf("restricted %d, changes %v", out.Restricted, by)
	}
}

// TestReplay_SubAgents_At: as of an entry before a sub-agent's end, the
// tree shows it running, with what it had done by then.
func TestReplay_SubAgents_At(t *testing.T) {
	path, seq := subAgentLedger(t, nil)
	r := run(t, "replay", replaytest.Session, "--at", utoa(seq["a.c1.done"]), "--ledger", path)
	r.wantCode(t, cli.ExitOK)
	r.wantOut(t, "sub-agent "+replaytest.SubA+" → running", "#"+utoa(seq["a.c1.exec"])+"→#"+utoa(seq["a.c1.done"])+" ran",
		"no end recorded: still running when the ledger was read, or its engine died")
	if strings.Contains(r.stdout, "collected the result") {
		t.Errorf("the result is collected after --at:\n%s", r.stdout)
	}
}
