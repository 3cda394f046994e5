package event_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/replay/replaytest"
)

// verifyHookScene writes steps as a ledger and verifies it strictly,
// returning the failures' texts and the steps' seqs.
func verifyHookScene(t *testing.T, steps []replaytest.Step) ([]string, map[string]uint64) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ledger.db")
	seqs := replaytest.Write(t, path, steps)
	l, err := ledger.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	rep, err := l.Verify(event.StrictOptions())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range rep.Failures {
		out = append(out, f.Error())
	}
	return out, seqs
}

// hookStep is a step of the hook scene's session.
func hookStep(name string, p event.Payload) replaytest.Step {
	return replaytest.Step{Name: name, Session: replaytest.HookSession, Payload: p}
}

// note is a harmless entry of the session, to replace a step with
// without moving the seqs after it (the hook call ids name them).
func note(name string) replaytest.Step {
	return hookStep(name, &event.Note{Author: "test", Text: "in place of " + name})
}

// TestCausality_Hook_SceneVerifies: a Claude Code session with a shell
// call, a blocked credential read, a read, a multi-edit of two opx calls
// and an interrupted edit verifies strictly, and its hook call ids are
// the seqs of their agent calls.
func TestCausality_Hook_SceneVerifies(t *testing.T) {
	got, seqs := verifyHookScene(t, replaytest.HookScene())
	wantFailure(t, got, "")
	steps := replaytest.HookScene()
	for _, name := range []string{"bash", "key", "read", "multi", "edit"} {
		p := replaytest.Find(steps, name+".0.proposed").Payload.(*event.ToolProposed)
		if want := event.HookCallID(seqs[name], 0); p.CallID != want {
			t.Errorf("%s: call id %s, want %s", name, p.CallID, want)
		}
	}
}

// TestCausality_Hook_Violations: what strict verify refuses in a hook
// session: a call run without an allowing verdict or, mutating, without
// its snapshot; part of an agent's call run while another part was
// blocked; proposals that no agent's call names; an interrupted end of
// opx's own call.
func TestCausality_Hook_Violations(t *testing.T) {
	scene := replaytest.HookScene()
	multi0 := replaytest.Find(scene, "multi.0.proposed").Payload.(*event.ToolProposed)
	bash := replaytest.Find(scene, "bash.0.proposed").Payload.(*event.ToolProposed)
	for _, tt := range []struct {
		name  string
		steps []replaytest.Step
		want  string
	}{
		{"run without a verdict", replaytest.Replace(replaytest.Replace(scene, "bash.0.t0", note("bash.0.t0")), "bash.0.t1", note("bash.0.t1")),
			"call " + bash.CallID + " executed without a verdict"},
		{"run although blocked", replaytest.Replace(scene, "bash.0.t1", hookStep("bash.0.t1", &event.ShieldVerdict{CallID: bash.CallID,
			Decision: event.Block, Tier: 1, Rule: "destructive", Reason: "no", ActionHash: bash.ActionHash, PolicyHash: replaytest.HookPolicyHash})),
			"call " + bash.CallID + " executed although it was blocked"},
		{"run without a snapshot", replaytest.Replace(scene, "bash.0.snapshot", note("bash.0.snapshot")),
			"mutating call " + bash.CallID + " executed without a snapshot first"},
		{"a part runs while another is blocked", replaytest.Replace(scene, "multi.1.t1", hookStep("multi.1.t1", &event.ShieldVerdict{
			CallID: strings.TrimSuffix(multi0.CallID, "0") + "1", Decision: event.Block, Tier: 1, Rule: "destructive", Reason: "no",
			ActionHash: replaytest.Find(scene, "multi.1.proposed").Payload.(*event.ToolProposed).ActionHash, PolicyHash: replaytest.HookPolicyHash})),
			"call " + multi0.CallID + " executed, but " + strings.TrimSuffix(multi0.CallID, "0") + "1 of the same agent's call"},
		{"a proposal of no agent's call", replaytest.Replace(scene, "read.0.proposed", hookStep("read.0.proposed", &event.ToolProposed{
			CallID: "c1", Tool: "read_file", Arguments: `{"path":"README.md"}`, ActionHash: replaytest.Action("read_file", `{"path":"README.md"}`)})),
			"proposal of call c1 in a session of an agent audited through its hooks"},
		{"an index past the agent's call", replaytest.Replace(scene, "read.0.proposed", hookStep("read.0.proposed", &event.ToolProposed{
			CallID: event.HookCallID(replaytest.SeqOf(scene, "read"), 1), Tool: "read_file", Arguments: `{"path":"README.md"}`,
			ActionHash: replaytest.Action("read_file", `{"path":"README.md"}`)})),
			"maps to 1 opx call(s)"},
		{"an id naming no agent's call", replaytest.Replace(scene, "read.0.proposed", hookStep("read.0.proposed", &event.ToolProposed{
			CallID: event.HookCallID(replaytest.SeqOf(scene, "p1"), 0), Tool: "read_file", Arguments: `{"path":"README.md"}`,
			ActionHash: replaytest.Action("read_file", `{"path":"README.md"}`)})),
			"which is no hook.tool_call of the session before it"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := verifyHookScene(t, tt.steps)
			if len(got) == 0 || !strings.Contains(got[0], tt.want) {
				t.Errorf("failures %q, want the first saying %q", got, tt.want)
			}
		})
	}
}

// TestCausality_Hook_InterruptedOwnCall: opx's own agent's calls are never
// closed as interrupted; an agent's call, in its hook session, may be.
func TestCausality_Hook_InterruptedOwnCall(t *testing.T) {
	proposed := `{"call_id":"c1","message_id":"m1","tool":"read_file","arguments":"{}","action_hash":"` + hashA + `","mutating":false}`
	verdict := `{"call_id":"c1","decision":"allow","tier":0,"rule":"r","action_hash":"` + hashA + `"}`
	started := `{"call_id":"c1","tool":"read_file","action_hash":"` + hashA + `"}`
	wantFailure(t, orderFailures([][3]string{
		{"s", event.TypeSessionCreated, `{"mode":"normal"}`},
		{"s", event.TypeToolProposed, proposed}, {"s", event.TypeShieldVerdict, verdict}, {"s", event.TypeExecStarted, started},
		{"s", event.TypeExecCompleted, `{"call_id":"c1","tool":"read_file","result":"x","interrupted":true}`},
	}), "call c1 recorded as interrupted, which is no agent's call")
	// A model naming its call like a hook call in a normal session is
	// no hook call either, but is not refused for its name.
	wantFailure(t, orderFailures([][3]string{
		{"s", event.TypeSessionCreated, `{"mode":"normal"}`},
		{"s", event.TypeToolProposed, strings.ReplaceAll(proposed, `"c1"`, `"hk1.0"`)},
		{"s", event.TypeShieldVerdict, strings.ReplaceAll(verdict, `"c1"`, `"hk1.0"`)},
		{"s", event.TypeExecStarted, strings.ReplaceAll(started, `"c1"`, `"hk1.0"`)},
		{"s", event.TypeHookEvent, `{"name":"Stop","kind":"stop","size":0}`},
	}), "hook.event in session s of mode normal")
}
