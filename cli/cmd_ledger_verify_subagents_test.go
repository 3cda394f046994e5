package cli_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/opx-dev/opx/cli"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/replay/replaytest"
)

// subAgentLedger writes the sub-agent scene, changed by plant, as a real
// ledger file and returns its path and seqs.
func subAgentLedger(t *testing.T, plant func([]replaytest.Step) []replaytest.Step) (string, map[string]uint64) {
	t.Helper()
	steps := replaytest.SubAgentScene()
	if plant != nil {
		steps = plant(steps)
	}
	path := filepath.Join(t.TempDir(), "ledger.db")
	return path, replaytest.Write(t, path, steps)
}

func TestLedgerVerify_SubAgents_Clean(t *testing.T) {
	path, _ := subAgentLedger(t, nil)
	run(t, "ledger", "verify", "--strict", "--ledger", path).wantCode(t, cli.ExitOK)
	// Shield's tier 2 evaluator judging, after the cancel, a proposal the
	// sub-agent made before it is Shield's model call, not the sub-agent's.
	path, _ = subAgentLedger(t, escalatedThenTier2AfterCancel)
	run(t, "ledger", "verify", "--strict", "--ledger", path).wantCode(t, cli.ExitOK)
}

// escalatedThenTier2AfterCancel plants SubB's proposal c3, escalated
// before its cancel, and the tier 2 evaluator's request about it after.
func escalatedThenTier2AfterCancel(st []replaytest.Step) []replaytest.Step {
	const s, b = replaytest.Session, replaytest.SubB
	args := `{"command":"go vet ./..."}`
	st = replaytest.Insert(st, "b.c2.result",
		replaytest.Step{Name: "b.c3.proposed", Session: s, Payload: &event.ToolProposed{SubAgentID: b, MessageID: "m1", CallID: "c3",
			Tool: "execute_command", Arguments: args, ActionHash: replaytest.Action("execute_command", args), Mutating: true}},
		replaytest.Step{Name: "b.c3.verdict", Session: s, Payload: &event.ShieldVerdict{SubAgentID: b, CallID: "c3", Decision: event.Escalate,
			Tier: 1, Rule: "default:ask-exec", ActionHash: replaytest.Action("execute_command", args), PolicyHash: replaytest.PolicyHash}})
	r := *replaytest.Find(st, "rb2.request").Payload.(*event.LLMRequest)
	r.RequestID = "tier2_1"
	return replaytest.Insert(st, "b.cancelled", replaytest.Step{Name: "tier2", Session: s, Payload: &r,
		Blobs: replaytest.Find(st, "rb2.request").Blobs})
}

// TestLedgerVerify_SubAgents_Planted plants one violation of the sub-agent
// rules in each ledger; verify --strict reports it at the planted entry,
// naming the sub-agent, and exits 4.
func TestLedgerVerify_SubAgents_Planted(t *testing.T) {
	const s, a, b = replaytest.Session, replaytest.SubA, replaytest.SubB
	step := func(name, session string, p event.Payload) replaytest.Step {
		return replaytest.Step{Name: name, Session: session, Payload: p}
	}
	tests := []struct {
		name   string
		plant  func([]replaytest.Step) []replaytest.Step
		at     string // the step reported
		detail string
	}{
		{"a sub-agent's execution without a verdict", func(st []replaytest.Step) []replaytest.Step {
			return replaytest.Remove(st, "a.c1.verdict")
		}, "a.c1.exec", "call c1 of sub-agent " + a + " executed without a verdict"},
		{"a sub-agent borrows its parent's verdict for the same call id", func(st []replaytest.Step) []replaytest.Step {
			return replaytest.Remove(st, "a.c1.agent", "a.c1.proposed", "a.c1.verdict")
		}, "a.c1.exec", "exec.started for call c1 of sub-agent " + a + ", which was never proposed"},
		{"a sub-agent borrows its sibling's approval", func(st []replaytest.Step) []replaytest.Step {
			// SubA's call c1 escalated, the approval recorded for SubB's.
			v := replaytest.Find(st, "a.c1.verdict").Payload.(*event.ShieldVerdict)
			esc := *v
			esc.Decision, esc.Tier = event.Escalate, 3
			return replaytest.Replace(st, "a.c1.verdict", step("a.c1.verdict", s, &esc))
		}, "a.c1.exec", "call c1 of sub-agent " + a + " executed while its escalation was unresolved"},
		{"an execution after cancel", func(st []replaytest.Step) []replaytest.Step {
			args := `{"path":"go.mod"}`
			return replaytest.Insert(replaytest.Insert(st, "b.c2.result",
				step("b.c3.proposed", s, &event.ToolProposed{SubAgentID: b, MessageID: "m1", CallID: "c3", Tool: "read_file", Arguments: args,
					ActionHash: replaytest.Action("read_file", args)}),
				step("b.c3.verdict", s, &event.ShieldVerdict{SubAgentID: b, CallID: "c3", Decision: event.Allow, Rule: "default:read",
					ActionHash: replaytest.Action("read_file", args), PolicyHash: replaytest.PolicyHash})), "b.cancelled",
				step("b.c3.exec", s, &event.ExecStarted{SubAgentID: b, CallID: "c3", Tool: "read_file", ActionHash: replaytest.Action("read_file", args)}))
		}, "b.c3.exec", "sub-agent " + b + " started executing call c3 after its end (subagent.cancelled at seq"},
		{"a model call after the end", func(st []replaytest.Step) []replaytest.Step {
			r := *replaytest.Find(st, "ra2.request").Payload.(*event.LLMRequest)
			r.RequestID = "late"
			return replaytest.Insert(st, "a.completed", replaytest.Step{Name: "late", Session: s, Payload: &r,
				Blobs: replaytest.Find(st, "ra2.request").Blobs})
		}, "late", "sub-agent " + a + " called a model (request late) after its end (subagent.completed at seq"},
		{"a model call after the end named like the tier 2 evaluator's", func(st []replaytest.Step) []replaytest.Step {
			r := *replaytest.Find(st, "ra2.request").Payload.(*event.LLMRequest)
			r.RequestID = "tier2_late"
			return replaytest.Insert(st, "a.completed", replaytest.Step{Name: "late", Session: s, Payload: &r,
				Blobs: replaytest.Find(st, "ra2.request").Blobs})
		}, "late", "sub-agent " + a + " called a model (request tier2_late) after its end (subagent.completed at seq"},
		{"a second tier 2 request after the end for one escalated call", func(st []replaytest.Step) []replaytest.Step {
			st = escalatedThenTier2AfterCancel(st)
			again := replaytest.Find(st, "tier2")
			again.Name = "tier2.again"
			return replaytest.Insert(st, "tier2", again)
		}, "tier2.again", "sub-agent " + b + " called a model (request tier2_1) after its end (subagent.cancelled at seq"},
		{"a sub-agent's process accepted again after its end", func(st []replaytest.Step) []replaytest.Step {
			ready := replaytest.Find(st, b+".ready")
			ready.Name = "late.ready"
			return replaytest.Insert(st, "b.cancelled", ready)
		}, "late.ready", "agent.ready accepts sub-agent " + b + " a second time"},
		{"a sub-agent's process started after its end", func(st []replaytest.Step) []replaytest.Step {
			p := replaytest.Find(st, b+".process")
			p.Name = "late.process"
			return replaytest.Insert(st, "b.cancelled", p)
		}, "late.process", "agent.spawned: a second process for sub-agent " + b},
		{"an entry of a never-spawned sub-agent", func(st []replaytest.Step) []replaytest.Step {
			return replaytest.Insert(st, "m1.process", step("ghost", s, &event.ProcessRequest{SubAgentID: "sub_ghost", MessageID: "m1",
				Content: "do it", Mode: "normal", Tools: []string{}}))
		}, "ghost", "engine.process_request of sub-agent sub_ghost, which was never spawned in session " + s},
		{"a process of a never-spawned sub-agent", func(st []replaytest.Step) []replaytest.Step {
			return replaytest.Insert(st, "m1.process", step("ghost", "", &event.AgentSpawned{AgentID: "sub_ghost", SubAgentID: "sub_ghost",
				PID: 7, Sandbox: event.SandboxConfig{Mechanism: "landlock"}}))
		}, "ghost", "agent.spawned names sub-agent sub_ghost, which no session spawned before it"},
		{"a sub-agent's entry before its spawn", func(st []replaytest.Step) []replaytest.Step {
			spawned := replaytest.Find(st, "a.spawned")
			return replaytest.Insert(replaytest.Remove(st, "a.spawned"), "a.process", spawned)
		}, a + ".process", "agent.spawned of sub-agent " + a + ", which was never spawned in session " + s},
		{"two end entries", func(st []replaytest.Step) []replaytest.Step {
			return replaytest.Insert(st, "b.cancelled", step("again", s, &event.SubAgentCompleted{SubAgentID: b, Result: "x", Size: 1}))
		}, "again", "sub-agent " + b + " ended twice: subagent.completed, after subagent.cancelled at seq"},
		{"the engine stops under a running sub-agent", func(st []replaytest.Step) []replaytest.Step {
			return replaytest.Remove(st, "b.cancelled")
		}, "engine.stopped", "engine.stopped while sub-agent " + b + " (session " + s},
		{"a spawn for a blocked call", func(st []replaytest.Step) []replaytest.Step {
			v := *replaytest.Find(st, "c2.verdict").Payload.(*event.ShieldVerdict)
			v.Decision = event.Block
			return replaytest.Replace(st, "c2.verdict", step("c2.verdict", s, &v))
		}, "b.spawned", "sub-agent " + b + " spawned for call c2, which was blocked"},
		{"a spawn for a call never proposed", func(st []replaytest.Step) []replaytest.Step {
			p := *replaytest.Find(st, "b.spawned").Payload.(*event.SubAgentSpawned)
			p.ParentCallID = "c9"
			return replaytest.Replace(st, "b.spawned", step("b.spawned", s, &p))
		}, "b.spawned", "sub-agent " + b + " spawned for call c9, which the session's agent never proposed"},
		{"a spawn for a sub-agent's call", func(st []replaytest.Step) []replaytest.Step {
			p := *replaytest.Find(st, "b.spawned").Payload.(*event.SubAgentSpawned)
			p.SubAgentID = "sub_child"
			return replaytest.Insert(st, "a.c1.verdict", step("child", s, &p))
		}, "child", "sub-agent sub_child spawned for call c2, which already spawned sub-agent " + b},
		{"an execution of a tool not granted", func(st []replaytest.Step) []replaytest.Step {
			v := *replaytest.Find(st, "b.c2.verdict").Payload.(*event.ShieldVerdict)
			v.Decision, v.Tier, v.Rule = event.Allow, 0, "default:allow"
			return replaytest.Insert(replaytest.Replace(st, "b.c2.verdict", step("b.c2.verdict", s, &v)), "b.c2.verdict",
				step("b.c2.snapshot", s, &event.Snapshot{SubAgentID: b, CallID: "c2", Tool: "write_file", Kind: event.KindFiles, Files: []event.FileState{}}),
				step("b.c2.exec", s, &event.ExecStarted{SubAgentID: b, CallID: "c2", Tool: "write_file",
					ActionHash: replaytest.Action("write_file", `{"content":"all pass","path":"TESTS.md"}`)}))
		}, "b.c2.exec", "sub-agent " + b + " executed write_file (call c2), a tool it was not granted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, seqs := subAgentLedger(t, tt.plant)
			r := run(t, "ledger", "verify", "--strict", "--json", "--ledger", path)
			r.wantCode(t, cli.ExitIntegrity)
			var found []string
			for _, f := range r.jsonObject(t)["failures"].([]any) {
				m := f.(map[string]any)
				found = append(found, m["seq"].(jsonNumber).String()+" "+m["kind"].(string)+": "+m["detail"].(string))
				if m["kind"] == "causality" && m["seq"].(jsonNumber).String() == utoa(seqs[tt.at]) &&
					strings.Contains(m["detail"].(string), tt.detail) {
					return
				}
			}
			t.Errorf("no causality failure at %s (seq %d) saying %q; failures:\n%s", tt.at, seqs[tt.at], tt.detail, strings.Join(found, "\n"))
		})
	}
	// The human form names the sub-agent too.
	path, _ := subAgentLedger(t, tests[0].plant)
	r := run(t, "ledger", "verify", "--strict", "--ledger", path)
	r.wantCode(t, cli.ExitIntegrity)
	r.wantOut(t, "causality", "call c1 of sub-agent "+a+" executed without a verdict")
}
