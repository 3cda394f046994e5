package replay_test

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/replay"
	"github.com/opx-dev/opx/replay/replaytest"
)

// hookTimeline writes steps as a ledger and builds the hook session's
// timeline from it.
func hookTimeline(t *testing.T, steps []replaytest.Step) (*replay.Timeline, map[string]uint64) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ledger.db")
	seq := replaytest.Write(t, path, steps)
	l, err := ledger.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return mustBuild(t, l, replaytest.HookSession, replay.Options{}), seq
}

// TestBuild_Hooks_AgentCalls: each agent call of a hook session is a step
// of its turn with the agent's own tool and input in short, beside the opx
// calls it maps to and how it ended.
func TestBuild_Hooks_AgentCalls(t *testing.T) {
	tl, seq := hookTimeline(t, replaytest.HookScene())
	if len(tl.Problems) != 0 {
		t.Errorf("problems: %v", tl.Problems)
	}
	if a := tl.Agent; a == nil || a.Seq != seq["agent"] || a.Name != "Claude Code" || a.AgentVersion != "2.0.14" || a.Model != "claude-sonnet-4-5" {
		t.Errorf("agent %+v", tl.Agent)
	}
	if len(tl.Transcripts) != 1 || tl.Transcripts[0].Seq != seq["transcript"] || tl.Transcripts[0].Path != replaytest.HookTranscriptPath {
		t.Errorf("transcripts %+v", tl.Transcripts)
	}
	if len(tl.Turns) != 2 || !tl.Turns[0].Hooked || !tl.Turns[1].Hooked {
		t.Fatalf("%d turns, want 2 hooked", len(tl.Turns))
	}
	t1, t2 := tl.Turns[0], tl.Turns[1]
	if t1.Status != replay.TurnAnswered || t1.Response == nil || t1.Response.Content != replaytest.HookStopText || t1.EndSeq != seq["stop"] {
		t.Errorf("turn 1: status %s, response %+v", t1.Status, t1.Response)
	}
	if t2.Status != replay.TurnOpen {
		t.Errorf("turn 2: status %s, want open (no end of the model's turn)", t2.Status)
	}
	tests := []struct {
		turn    *replay.Turn
		name    string
		tool    string
		short   string
		outcome string
		opx     []string // outcomes of its opx calls
	}{
		{t1, "bash", "Bash", "echo one > one.txt && echo two > two.txt", replay.OutcomeCompleted, []string{replay.OutcomeCompleted}},
		{t1, "key", "Bash", "cat ~/.ssh/id_rsa", replay.OutcomeBlocked, []string{replay.OutcomeBlocked}},
		{t1, "read", "Read", "README.md", replay.OutcomeCompleted, []string{replay.OutcomeCompleted}},
		{t1, "multi", "MultiEdit", "README.md, 2 edits", replay.OutcomeCompleted, []string{replay.OutcomeCompleted, replay.OutcomeCompleted}},
		{t2, "edit", "Edit", "notes.md", replay.OutcomeInterrupted, []string{replay.OutcomeInterrupted}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			i := slices.IndexFunc(tt.turn.AgentCalls, func(ac *replay.AgentCall) bool { return ac.Seq == seq[tt.name] })
			if i < 0 {
				t.Fatalf("no agent call at seq %d in turn %d", seq[tt.name], tt.turn.N)
			}
			ac := tt.turn.AgentCalls[i]
			if ac.AgentTool != tt.tool || ac.Short != tt.short || ac.Outcome != tt.outcome || ac.Calls != len(tt.opx) {
				t.Errorf("%s %q → %s (%d calls), want %s %q → %s", ac.AgentTool, ac.Short, ac.Outcome, ac.Calls, tt.tool, tt.short, tt.outcome)
			}
			var got []string
			for j, tc := range ac.OpxCalls() {
				got = append(got, tc.Outcome)
				if tc.AgentCall != ac.Seq || tc.CallID != event.HookCallID(ac.Seq, j) || ac.CallIDs[j] != tc.CallID {
					t.Errorf("opx call %d: %s of agent call %d", j, tc.CallID, tc.AgentCall)
				}
			}
			if !slices.Equal(got, tt.opx) {
				t.Errorf("opx calls %v, want %v", got, tt.opx)
			}
		})
	}
	key := t1.AgentCalls[1]
	if key.BlockedBy == nil || key.BlockedBy.Rule != "credential-path" || key.BlockedBy.Seq != seq["key.0.t1"] {
		t.Errorf("blocked by %+v, want the tier 1 credential-path verdict", key.BlockedBy)
	}
	edit := t2.AgentCalls[0].OpxCalls()[0]
	if x := edit.Exec; x == nil || !x.Interrupted || x.EndSeq != seq["edit.0.done"] || !slices.Equal(x.Changed, []string{"notes.md"}) {
		t.Errorf("interrupted edit's execution %+v", edit.Exec)
	}
	// Turn 1 is, in order: the title, the four agent calls (their opx
	// calls under them, none on their own), the end of the model's turn.
	var kinds []string
	for _, st := range t1.Steps() {
		switch {
		case st.Agent != nil:
			kinds = append(kinds, st.Agent.AgentTool+"/"+strings.Repeat("c", len(st.Calls)))
		case st.Event != nil:
			kinds = append(kinds, st.Event.Type)
		case st.Response != nil:
			kinds = append(kinds, "response")
		default:
			kinds = append(kinds, "other")
		}
	}
	if want := []string{event.TypeSessionTitled, "Bash/c", "Bash/c", "Read/c", "MultiEdit/cc", "response"}; !slices.Equal(kinds, want) {
		t.Errorf("turn 1 steps %v, want %v", kinds, want)
	}
	tt := tl.Totals
	if tt.AgentCalls != 5 || tt.ToolCalls != 6 || tt.Blocked != 1 || tt.Interrupted != 1 || tt.Completed != 5 {
		t.Errorf("totals %+v", tt)
	}
	wantTools := []replay.AgentToolUsage{{AgentTool: "Bash", Calls: 2, Blocked: 1}, {AgentTool: "Edit", Calls: 1, Interrupted: 1},
		{AgentTool: "MultiEdit", Calls: 1}, {AgentTool: "Read", Calls: 1}}
	if !slices.Equal(tt.ByAgentTool, wantTools) {
		t.Errorf("by agent tool %+v, want %+v", tt.ByAgentTool, wantTools)
	}
}

// TestBuild_Hooks_Events: the session's other hook entries are events
// where they happened: the agent, a post-tool report opx has no record
// of, the session's end, the transcript, and, after the session, the call
// the agent's hook let through while no engine ran (read for the review).
func TestBuild_Hooks_Events(t *testing.T) {
	tl, seq := hookTimeline(t, replaytest.HookScene())
	summaries := map[uint64]string{}
	for _, ev := range tl.Events {
		summaries[ev.Seq] = ev.Summary
	}
	for _, tn := range tl.Turns {
		for _, ev := range tn.Events {
			summaries[ev.Seq] = ev.Summary
		}
	}
	for name, want := range map[string]string{
		"agent":      `Claude Code 2.0.14 session "s1" (startup), model claude-sonnet-4-5`,
		"orphan":     "the agent reported the end of its Bash call toolu_77, of which opx has no open record",
		"end":        "the agent's session ended (other)",
		"transcript": `the agent's transcript "` + replaytest.HookTranscriptPath + `" stored`,
		"unrecorded": `while no engine ran, opx hook PreToolUse answered allow to Claude Code's Bash "{\"command\":\"rm -rf build\"}"`,
	} {
		if !strings.Contains(summaries[seq[name]], want) {
			t.Errorf("%s (seq %d): %q, want it to say %q", name, seq[name], summaries[seq[name]], want)
		}
	}
	if !slices.Contains(tl.Read(), seq["unrecorded"]) {
		t.Errorf("the timeline's entries %v leave out the unrecorded call at %d", tl.Read(), seq["unrecorded"])
	}
	// Another agent's session is not this one's.
	other := replaytest.Replace(replaytest.HookScene(), "unrecorded", replaytest.Step{Name: "unrecorded", Payload: &event.HookUnrecorded{
		Agent: "claude", AgentSessionID: "s2", Name: "PreToolUse", AgentTool: "Bash", At: "2026-11-22T10:00:14Z", Decision: "allow", Reason: "r"}})
	tl2, _ := hookTimeline(t, other)
	if slices.Contains(tl2.Read(), seq["unrecorded"]) {
		t.Errorf("an unrecorded call of another agent session is read for this one")
	}
}

// TestBuild_Hooks_Unprompted: calls before any prompt opx saw are held by
// a turn of their own, which the end of the model's turn answers.
func TestBuild_Hooks_Unprompted(t *testing.T) {
	steps := replaytest.Replace(replaytest.HookScene(), "p1", replaytest.Step{Name: "p1", Session: replaytest.HookSession,
		Payload: &event.Note{Author: "test", Text: "no prompt"}})
	tl, seq := hookTimeline(t, steps)
	if len(tl.Problems) != 0 {
		t.Errorf("problems: %v", tl.Problems)
	}
	tn := tl.Turns[0]
	if !tn.Unprompted || !tn.Hooked || tn.Seq != seq["bash"] || len(tn.AgentCalls) != 4 || tn.Status != replay.TurnAnswered {
		t.Errorf("turn 1: unprompted %v, seq %d, %d agent calls, %s", tn.Unprompted, tn.Seq, len(tn.AgentCalls), tn.Status)
	}
}

// TestBuild_Hooks_JSON: the JSON timeline carries the agent calls with
// their tools, inputs and opx call ids, and the interrupted execution.
func TestBuild_Hooks_JSON(t *testing.T) {
	tl, seq := hookTimeline(t, replaytest.HookScene())
	b, err := json.Marshal(tl)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Agent struct {
			Agent, Model string
		}
		Turns []struct {
			Hooked     bool
			AgentCalls []struct {
				Seq       uint64
				AgentTool string   `json:"agent_tool"`
				Input     string   `json:"input"`
				CallIDs   []string `json:"call_ids"`
				Outcome   string
			} `json:"agent_calls"`
			ToolCalls []struct {
				CallID    string `json:"call_id"`
				AgentCall uint64 `json:"agent_call"`
				Exec      *struct{ Interrupted bool }
			} `json:"tool_calls"`
		}
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got.Agent.Agent != "claude" || len(got.Turns) != 2 || !got.Turns[0].Hooked || len(got.Turns[0].AgentCalls) != 4 {
		t.Fatalf("%s", b)
	}
	multi := got.Turns[0].AgentCalls[3]
	if multi.Seq != seq["multi"] || multi.AgentTool != "MultiEdit" || !strings.Contains(multi.Input, `"edits"`) || len(multi.CallIDs) != 2 {
		t.Errorf("multi-edit %+v", multi)
	}
	edit := got.Turns[1].ToolCalls[0]
	if edit.AgentCall != seq["edit"] || edit.Exec == nil || !edit.Exec.Interrupted || got.Turns[1].AgentCalls[0].Outcome != "interrupted" {
		t.Errorf("interrupted edit %+v", edit)
	}
}
