package cli_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opx-dev/opx/cli"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/replay/replaytest"
)

// hookLedger writes the hook scene (a Claude Code session audited through
// its hooks) as a real ledger file and returns its path and seqs.
func hookLedger(t *testing.T) (string, map[string]uint64) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ledger.db")
	return path, replaytest.Write(t, path, replaytest.HookScene())
}

// TestReplay_Hooks: opx replay of a hook session shows each agent call
// with the agent's own tool and its input in short beside opx's calls and
// judgment (verdicts with tier, rule and reason, snapshots, results, the
// blocked and the interrupted one), the prompts as turns, the end of the
// model's turn, the session's end and the transcript; --json carries the
// same.
func TestReplay_Hooks(t *testing.T) {
	path, seq := hookLedger(t)
	r := run(t, "replay", replaytest.HookSession, "--ledger", path)
	r.wantCode(t, cli.ExitOK)
	r.wantOut(t,
		"agent Claude Code 2.0.14 (seq 3), its session \"s1\", model claude-sonnet-4-5",
		"transcript "+replaytest.HookTranscriptPath+" stored at seq "+utoa(seq["transcript"]),
		"turn 1  #"+utoa(seq["p1"])+"  user via opx hook claude: \"make two files, then fix the README\"",
		"#"+utoa(seq["bash"])+" Bash \"echo one > one.txt && echo two > two.txt\" (shell) → completed",
		"execute_command {\"command\":\"echo one > one.txt && echo two > two.txt\"} → completed",
		"snapshot (workspace) of one.txt, two.txt", "changed one.txt, two.txt",
		"#"+utoa(seq["key"])+" Bash \"cat ~/.ssh/id_rsa\" (shell) → BLOCKED",
		"block tier 1 credential-path: cat reads "+replaytest.HookHome+"/.ssh/id_rsa",
		"#"+utoa(seq["multi"])+" MultiEdit \"README.md, 2 edits\" (write, 2 opx calls) → completed",
		"#"+utoa(seq["stop"])+" the model ended its turn after", replaytest.HookStopText,
		"#"+utoa(seq["edit"])+" Edit \"notes.md\" (write) → INTERRUPTED: the agent never reported its end",
		"interrupted after 3007 ms, the agent never reported its end", "changed notes.md",
		"the agent reported the end of its Bash call toolu_77, of which opx has no open record",
		"the agent's session ended (other)",
		"while no engine ran, opx hook PreToolUse answered allow to Claude Code's Bash",
		"model calls not through opx",
		"agent calls: 5 (Bash 2, Edit 1, MultiEdit 1, Read 1): 1 blocked, 1 interrupted",
		"blocked:\n  #"+utoa(seq["key.0.proposed"])+" [Bash] execute_command")
	// The multi-edit's two opx calls are under it, in order.
	if i, j, k := seqAt(r.stdout, seq["multi"]), seqAt(r.stdout, seq["multi.0.proposed"]), seqAt(r.stdout, seq["multi.1.proposed"]); i < 0 || j < i || k < j {
		t.Errorf("the multi-edit's opx calls are not under it:\n%s", r.stdout)
	}

	j := run(t, "replay", replaytest.HookSession, "--json", "--ledger", path)
	j.wantCode(t, cli.ExitOK)
	var out struct {
		Timeline struct {
			Mode  string
			Agent struct{ Agent, Name string }
			Turns []struct {
				AgentCalls []struct {
					AgentTool string   `json:"agent_tool"`
					Short     string   `json:"short"`
					CallIDs   []string `json:"call_ids"`
					Outcome   string
				} `json:"agent_calls"`
			}
			Totals struct {
				AgentCalls  int `json:"agent_calls"`
				Interrupted int
			}
		}
	}
	if err := json.Unmarshal([]byte(j.stdout), &out); err != nil {
		t.Fatal(err)
	}
	tl := out.Timeline
	if tl.Mode != "claude-code" || tl.Agent.Name != "Claude Code" || len(tl.Turns) != 2 || tl.Totals.AgentCalls != 5 || tl.Totals.Interrupted != 1 {
		t.Fatalf("--json: %s", j.stdout)
	}
	var got []string
	for _, tn := range tl.Turns {
		for _, ac := range tn.AgentCalls {
			got = append(got, ac.AgentTool+":"+ac.Outcome+":"+utoa(uint64(len(ac.CallIDs))))
		}
	}
	if want := "Bash:completed:1 Bash:blocked:1 Read:completed:1 MultiEdit:completed:2 Edit:interrupted:1"; strings.Join(got, " ") != want {
		t.Errorf("--json agent calls %v, want %s", got, want)
	}
}

// TestReview_Hooks: the other review commands on a hook session:
// sessions lists it with its mode, history holds the prompts and the
// model's last message, the report shows the agent's tools and its
// transcript, metrics count the agent's calls by tool, blocked and
// interrupted.
func TestReview_Hooks(t *testing.T) {
	path, _ := hookLedger(t)
	s := run(t, "sessions", "--ledger", path)
	s.wantCode(t, cli.ExitOK)
	s.wantOut(t, replaytest.HookSession, " claude-code ")

	h := run(t, "history", replaytest.HookSession, "--ledger", path)
	h.wantCode(t, cli.ExitOK)
	h.wantOut(t, "make two files, then fix the README", replaytest.HookStopText, "now fix the typo in notes.md")
	if i, j := strings.Index(h.stdout, "make two files"), strings.Index(h.stdout, replaytest.HookStopText); j < i {
		t.Errorf("the model's last message comes before the prompt:\n%s", h.stdout)
	}

	rep := run(t, "report", "-o", "-", "--no-workspace", "--ledger", path, replaytest.HookSession)
	rep.wantCode(t, cli.ExitOK)
	rep.wantOut(t, `<dt>Agent</dt><dd class="hook-agent">Claude Code 2.0.14`,
		`<code>`+replaytest.HookTranscriptPath+`</code>, stored at seq`, `&#34;make two files, then fix the README&#34;`,
		`the agent's <code class="agent-tool">Bash</code> <code class="args">echo one &gt; one.txt &amp;&amp; echo two &gt; two.txt</code> (shell) → <span class="o-good">completed</span>`,
		`the agent's <code class="agent-tool">MultiEdit</code>`, `<b>the model ended its turn</b>`,
		`interrupted after 3007 ms: the agent never reported its end`,
		`the agent's <code class="agent-tool">Bash</code> call #`, // in the blocked box
		`<dt>Agent calls</dt><dd>5 (`, `1 blocked or denied`, `1 interrupted`, `<h3>The agent's tools</h3>`)

	m := run(t, "metrics", "--ledger", path)
	m.wantCode(t, cli.ExitOK)
	m.wantOut(t, "SESSIONS BY MODE: claude-code 1", "AGENT TOOLS",
		"claude-code   Bash                           2        1            0",
		"claude-code   Edit                           1        0            1",
		"claude-code   MultiEdit                      1        0            0",
		"let through unjudged while no engine ran (hooks.on_engine_down: allow): claude 1")
	var mj struct {
		Sessions   map[string]uint64
		AgentTools []struct {
			Mode, Tool                  string
			Calls, Blocked, Interrupted uint64
		} `json:"agent_tools"`
	}
	if err := json.Unmarshal([]byte(run(t, "metrics", "--json", "--ledger", path).stdout), &mj); err != nil {
		t.Fatal(err)
	}
	if mj.Sessions["claude-code"] != 1 || len(mj.AgentTools) != 4 || mj.AgentTools[0].Tool != "Bash" || mj.AgentTools[0].Blocked != 1 {
		t.Errorf("metrics --json %+v", mj)
	}
}

// TestReplay_Hooks_Rerun: --rerun of a hook session says its model calls
// cannot be re-driven and re-judges every recorded proposal under the
// recorded policy: the scene's decisions are Shield's (exit 0); a
// recorded decision Shield would not take is a divergence (exit 4).
func TestReplay_Hooks_Rerun(t *testing.T) {
	path, _ := hookLedger(t)
	r := run(t, "replay", replaytest.HookSession, "--rerun", "--ledger", path)
	r.wantCode(t, cli.ExitOK)
	r.wantOut(t, "rerun of claude-code session "+replaytest.HookSession+" (Claude Code 2.0.14): ", "5 agent calls, 6 proposals, 2 prompts",
		"the agent's model calls cannot be re-driven", "re-judged instead, under the policy recorded in force",
		"policy recorded in force: "+replaytest.HookPolicyHash[:12],
		"identical: the 6 proposals reach the same decisions")

	// The credential read recorded as allowed (and never run): Shield
	// under the recorded policy blocks it.
	steps := replaytest.HookScene()
	key := replaytest.Find(steps, "key.0.t1").Payload.(*event.ShieldVerdict)
	allowed := *key
	allowed.Decision, allowed.Rule, allowed.Reason = event.Allow, "heuristics:none", "no heuristic matched"
	forged := filepath.Join(t.TempDir(), "ledger.db")
	seq := replaytest.Write(t, forged, replaytest.Replace(steps, "key.0.t1", replaytest.Step{Name: "key.0.t1", Session: replaytest.HookSession, Payload: &allowed}))
	d := run(t, "replay", replaytest.HookSession, "--rerun", "--ledger", forged)
	d.wantCode(t, cli.ExitIntegrity)
	d.wantOut(t, "divergence: 1 decision of 6 would differ under the recorded policy", "decisions that would change:",
		fmt.Sprintf("seq %-6d [Bash]", seq["key.0.t0"]), "[Bash] execute_command {\"command\":\"cat ~/.ssh/id_rsa\"}",
		"allow tier 0 policy:text-and-inspection  ->  block tier 1 credential-path")
	j := run(t, "replay", replaytest.HookSession, "--rerun", "--json", "--ledger", forged)
	j.wantCode(t, cli.ExitIntegrity)
	var out struct {
		Redriven        bool
		Note            string
		Mode            string
		Identical       bool
		DecisionChanges int `json:"decision_changes"`
		Changes         []struct {
			AgentTool string `json:"agent_tool"`
			AgentCall uint64 `json:"agent_call"`
		}
	}
	if err := json.Unmarshal([]byte(j.stdout), &out); err != nil {
		t.Fatal(err)
	}
	if out.Redriven || !strings.Contains(out.Note, "cannot be re-driven") || out.Mode != "claude-code" || out.Identical || out.DecisionChanges != 1 ||
		len(out.Changes) != 1 || out.Changes[0].AgentTool != "Bash" || out.Changes[0].AgentCall != seq["key"] {
		t.Errorf("--rerun --json: %s", j.stdout)
	}
}

// TestReplay_Hooks_WhatIf: --policy re-judges a hook session's proposals
// under another policy and names the agent's own tool of each change.
func TestReplay_Hooks_WhatIf(t *testing.T) {
	path, seq := hookLedger(t)
	policy := filepath.Join(t.TempDir(), "no-reads.yaml")
	if err := os.WriteFile(policy, []byte("version: 1\ndefault: allow\ndeny:\n  - name: no-reads\n    tools: [\"read_file\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, "replay", replaytest.HookSession, "--policy", policy, "--ledger", path)
	r.wantCode(t, cli.ExitOK)
	r.wantOut(t, "what-if: 6 proposals of session "+replaytest.HookSession, "decisions that would change:",
		fmt.Sprintf("seq %-6d [Read] read_file {\"path\":\"README.md\"}", seq["read.0.t0"]), "->  block tier 0 policy:no-reads")
}

// TestVerify_Hooks: opx ledger verify --strict passes on a hook session
// with a blocked and an interrupted call, and fails (exit 4) on one whose
// agent's call ran without its snapshot.
func TestVerify_Hooks(t *testing.T) {
	path, _ := hookLedger(t)
	run(t, "ledger", "verify", "--strict", "--ledger", path).wantCode(t, cli.ExitOK)

	steps := replaytest.HookScene()
	bash := replaytest.Find(steps, "bash.0.proposed").Payload.(*event.ToolProposed)
	broken := filepath.Join(t.TempDir(), "ledger.db")
	seq := replaytest.Write(t, broken, replaytest.Replace(steps, "bash.0.snapshot", replaytest.Step{Name: "bash.0.snapshot",
		Session: replaytest.HookSession, Payload: &event.Note{Author: "test", Text: "no snapshot"}}))
	r := run(t, "ledger", "verify", "--strict", "--ledger", broken)
	r.wantCode(t, cli.ExitIntegrity)
	r.wantOut(t, "seq "+utoa(seq["bash.0.exec"]), "mutating call "+bash.CallID+" executed without a snapshot first")
	// Default verification checks no causality: it passes.
	run(t, "ledger", "verify", "--ledger", broken).wantCode(t, cli.ExitOK)
}

// TestReplay_Hooks_EscapesAgentText: what the agent sent (its tool name,
// input, prompt, last message) reaches the terminal escaped.
func TestReplay_Hooks_EscapesAgentText(t *testing.T) {
	steps := replaytest.HookScene()
	bash := *replaytest.Find(steps, "bash").Payload.(*event.HookToolCall)
	bash.AgentTool, bash.Input = "Ba\x1b]0;pwned\x07sh", `{"command":"echo \u001b[2J\u202eoops"}`
	bash.InputSize = int64(len(bash.Input))
	stop := *replaytest.Find(steps, "stop").Payload.(*event.HookEvent)
	stop.Text = "done\x1b[31m"
	stop.Size = int64(len(stop.Text))
	steps = replaytest.Replace(steps, "bash", replaytest.Step{Name: "bash", Session: replaytest.HookSession, Payload: &bash})
	steps = replaytest.Replace(steps, "stop", replaytest.Step{Name: "stop", Session: replaytest.HookSession, Payload: &stop})
	path := filepath.Join(t.TempDir(), "ledger.db")
	replaytest.Write(t, path, steps)
	for _, args := range [][]string{{"replay", replaytest.HookSession}, {"metrics"}, {"history", replaytest.HookSession}} {
		r := run(t, append(args, "--ledger", path)...)
		r.wantCode(t, cli.ExitOK)
		if strings.ContainsAny(r.stdout, "\x1b\x07\u202e") {
			t.Errorf("%v prints the agent's control characters raw:\n%q", args, r.stdout)
		}
	}
}
