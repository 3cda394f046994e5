package replay_test

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/replay"
	"github.com/opx-dev/opx/replay/replaytest"
)

func subAgentTimeline(t *testing.T) (*replay.Timeline, map[string]uint64) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ledger.db")
	seqs := replaytest.Write(t, path, replaytest.SubAgentScene())
	l, err := ledger.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return mustBuild(t, l, replaytest.Session, replay.Options{}), seqs
}

// TestBuild_SubAgents_Tree: each sub-agent hangs under the parent's call
// that spawned it, with its own turns, calls, verdicts and end, its
// interleaved entries grouped; the parent's turn holds only its own.
func TestBuild_SubAgents_Tree(t *testing.T) {
	tl, seq := subAgentTimeline(t)
	if len(tl.Problems) != 0 {
		t.Fatalf("problems: %v", tl.Problems)
	}
	if len(tl.Turns) != 1 || tl.Turns[0].SubAgentID != "" {
		t.Fatalf("turns %d, want the parent's one", len(tl.Turns))
	}
	parent := tl.Turns[0]
	spawns := map[string]*replay.ToolCall{}
	for _, tc := range parent.ToolCalls {
		if tc.SubAgentID != "" {
			t.Errorf("the parent's turn holds sub-agent %s's call %s", tc.SubAgentID, tc.CallID)
		}
		if tc.SubAgent != nil {
			spawns[tc.CallID] = tc
		}
	}
	want := map[string]struct{ id, status string }{"c1": {replaytest.SubA, replay.SubAgentCompleted}, "c2": {replaytest.SubB, replay.SubAgentCancelled},
		"c5": {replaytest.SubC, replay.SubAgentFailed}, "c6": {replaytest.SubD, replay.SubAgentTimedOut}}
	for call, w := range want {
		tc := spawns[call]
		if tc == nil || tc.SubAgent.ID != w.id || tc.SubAgent.Status != w.status {
			t.Fatalf("call %s spawned %+v, want %s %s", call, tc, w.id, w.status)
		}
	}
	a := spawns["c1"].SubAgent
	if a.SpawnedSeq != seq["a.spawned"] || len(a.Turns) != 1 || a.Turns[0].N != 1 || a.Turns[0].Status != replay.TurnAnswered {
		t.Fatalf("sub-agent A: spawned %d turns %+v", a.SpawnedSeq, a.Turns)
	}
	at := a.Turns[0]
	if len(at.ModelCalls) != 2 || len(at.ToolCalls) != 1 || at.ToolCalls[0].Seq != seq["a.c1.proposed"] ||
		at.ToolCalls[0].Outcome != replay.OutcomeCompleted || at.ToolCalls[0].Result.Seq != seq["a.c1.result"] {
		t.Errorf("sub-agent A's turn: %d model calls, calls %+v", len(at.ModelCalls), at.ToolCalls)
	}
	if a.End == nil || a.End.Seq != seq["a.completed"] || a.End.Result != replaytest.ResultA {
		t.Errorf("A's end %+v", a.End)
	}
	if a.CollectedSeq != seq["c3.result"] || a.CollectedBy != "c3" || len(a.ParentCalls) != 1 || a.ParentCalls[0] != seq["c3.proposed"] {
		t.Errorf("A collected at %d by %s, parent calls %v; want %d by c3", a.CollectedSeq, a.CollectedBy, a.ParentCalls, seq["c3.result"])
	}
	var events []string
	for _, ev := range a.Events {
		events = append(events, ev.Type)
	}
	if len(events) != 4 || events[0] != event.TypeAgentSpawned || events[3] != event.TypeAgentExited {
		t.Errorf("A's events %v, want its process: spawned, canary, ready, exited", events)
	}

	// SubB: the same call id c1 as A's and the parent's, each its own.
	b := spawns["c2"].SubAgent
	bc := b.Turns[0].ToolCalls
	if len(bc) != 2 || bc[0].CallID != "c1" || bc[0].SubAgentID != replaytest.SubB || bc[0].Approval == nil ||
		bc[0].Approval.SubAgentID != replaytest.SubB || !bc[0].Approval.Approved || bc[0].Snapshot == nil ||
		bc[0].Snapshot.Seq != seq["b.c1.snapshot"] || bc[0].Outcome != replay.OutcomeCompleted {
		t.Fatalf("B's calls %+v", bc)
	}
	if bc[1].Outcome != replay.OutcomeBlocked || bc[1].BlockedBy.Rule != "subagent:not-granted" {
		t.Errorf("B's write_file %s by %+v, want blocked subagent:not-granted", bc[1].Outcome, bc[1].BlockedBy)
	}
	if b.End.ByCallID != "c4" || b.CollectedSeq != seq["c4.result"] || b.CollectedBy != "c4" {
		t.Errorf("B's end %+v collected %d", b.End, b.CollectedSeq)
	}
	if spawns["c5"].SubAgent.End.Reason != event.SubAgentCrashed {
		t.Errorf("C's end %+v", spawns["c5"].SubAgent.End)
	}

	tt := tl.Totals
	if tt.SubAgents != (replay.SubAgentCounts{Spawned: 4, Completed: 1, Failed: 1, Cancelled: 1, TimedOut: 1}) {
		t.Errorf("sub-agent counts %+v", tt.SubAgents)
	}
	// The totals hold the sub-agents' work: 3+3 parent calls, 1 of A, 2 of B.
	if tt.Turns != 1 || tt.ToolCalls != 9 || tt.ModelCalls != 3+2+2+1 || tt.Crashes != 1 || tt.Blocked != 1 {
		t.Errorf("totals %+v", tt)
	}
	if got := tl.Blocked(); len(got) != 1 || got[0].SubAgentID != replaytest.SubB {
		t.Errorf("blocked %+v", got)
	}
}

// TestBuild_SubAgents_NeverSpawned: a sub-agent's entries with no spawn
// stay visible at the top level and are reported.
func TestBuild_SubAgents_NeverSpawned(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	steps := replaytest.Insert(replaytest.SubAgentScene(), "m1.process", replaytest.Step{Name: "ghost", Session: replaytest.Session,
		Payload: &event.ProcessRequest{SubAgentID: "sub_ghost", MessageID: "m1", Content: "do it", Mode: "normal", Tools: []string{}}})
	replaytest.Write(t, path, steps)
	l, err := ledger.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	tl := mustBuild(t, l, replaytest.Session, replay.Options{})
	if len(tl.Turns) != 2 || tl.Turns[1].SubAgentID != "sub_ghost" || len(tl.Problems) != 1 {
		t.Errorf("turns %d, problems %v", len(tl.Turns), tl.Problems)
	}
}

// renameSub returns steps with every mention of sub-agent id from
// replaced by to (each payload through its JSON form).
func renameSub(t *testing.T, steps []replaytest.Step, from, to string) []replaytest.Step {
	t.Helper()
	out := make([]replaytest.Step, len(steps))
	for i, s := range steps {
		b, err := json.Marshal(s.Payload)
		if err != nil {
			t.Fatal(err)
		}
		p := reflect.New(reflect.TypeOf(s.Payload).Elem()).Interface().(event.Payload)
		if err := json.Unmarshal([]byte(strings.ReplaceAll(string(b), from, to)), p); err != nil {
			t.Fatal(err)
		}
		switch p := p.(type) { // inline contents that named the id
		case *event.ExecCompleted:
			p.Size = int64(len(p.Result))
		case *event.ToolResult:
			p.Size = int64(len(p.Content))
		}
		s.Payload = p
		out[i] = s
	}
	return out
}

// parentAgentCall is an executed call of the session's agent: proposed,
// allowed, started, completed, its result delivered (steps named
// name.proposed ... name.result).
func parentAgentCall(name, callID, tool, args, result string) []replaytest.Step {
	h := replaytest.Action(tool, args)
	step := func(suffix string, p event.Payload) replaytest.Step {
		return replaytest.Step{Name: name + "." + suffix, Session: replaytest.Session, Payload: p}
	}
	return []replaytest.Step{
		step("proposed", &event.ToolProposed{MessageID: "m1", CallID: callID, Tool: tool, Arguments: args, ActionHash: h}),
		step("verdict", &event.ShieldVerdict{CallID: callID, Decision: event.Allow, Rule: "default:allow", ActionHash: h, PolicyHash: replaytest.PolicyHash}),
		step("exec", &event.ExecStarted{CallID: callID, Tool: tool, ActionHash: h}),
		step("done", &event.ExecCompleted{CallID: callID, Tool: tool, Result: result, Size: int64(len(result)), Post: []event.PostState{}}),
		step("result", &event.ToolResult{CallID: callID, Content: result, Size: int64(len(result))}),
	}
}

// TestBuild_SubAgents_ParentCallsByExactID: a parent call is about the
// sub-agent its agent tool's "id" names exactly: not one whose id is a
// prefix of it (the engine suffixes a colliding id: sub_X, sub_X_2), not
// any call that mentions an id. A completed sub-agent is collected by
// agent_result only, not by an agent_status that withholds its result.
func TestBuild_SubAgents_ParentCallsByExactID(t *testing.T) {
	a, b := replaytest.SubA, replaytest.SubA+"_2"
	steps := renameSub(t, replaytest.SubAgentScene(), replaytest.SubB, b)
	steps = replaytest.Insert(steps, "r2.response", append(
		parentAgentCall("note", "c7", "read_file", `{"path":"notes/`+a+`.md"}`, "notes"),
		parentAgentCall("status", "c8", "agent_status", `{"id":"`+a+`"}`, `{"state":"completed"}`)...)...)
	path := filepath.Join(t.TempDir(), "ledger.db")
	seqs := replaytest.Write(t, path, steps)
	l, err := ledger.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	tl := mustBuild(t, l, replaytest.Session, replay.Options{})
	about := map[string]string{}
	for _, tc := range tl.Turns[0].ToolCalls {
		about[tc.CallID] = tc.AboutSubAgent
	}
	want := map[string]string{"c3": a, "c4": b, "c7": "", "c8": a}
	for call, id := range want {
		if about[call] != id {
			t.Errorf("call %s is about %q, want %q", call, about[call], id)
		}
	}
	for _, sa := range tl.SubAgents() {
		switch sa.ID {
		case a:
			if sa.CollectedSeq != seqs["c3.result"] || sa.CollectedBy != "c3" {
				t.Errorf("%s collected at %d by %q, want the agent_result c3 at %d", a, sa.CollectedSeq, sa.CollectedBy, seqs["c3.result"])
			}
			if len(sa.ParentCalls) != 2 || sa.ParentCalls[0] != seqs["status.proposed"] || sa.ParentCalls[1] != seqs["c3.proposed"] {
				t.Errorf("%s parent calls %v, want c8 and c3", a, sa.ParentCalls)
			}
		case b:
			if sa.CollectedSeq != seqs["c4.result"] || len(sa.ParentCalls) != 1 || sa.ParentCalls[0] != seqs["c4.proposed"] {
				t.Errorf("%s collected at %d, parent calls %v; want the cancel_agent c4", b, sa.CollectedSeq, sa.ParentCalls)
			}
		}
	}
}
