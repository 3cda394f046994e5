package replay_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/replay"
)

// TestBuild_Sample_Injection reads the sample's prompt injection: one turn
// in which the model, having read README.md, asks for three actions that
// Shield blocks at tier 1, each with its rule and reason.
func TestBuild_Sample_Injection(t *testing.T) {
	l := importSample(t)
	tl := mustBuild(t, l, sessionTitled(t, l, "Follow the README setup"), replay.Options{})
	if len(tl.Turns) != 1 || tl.Turns[0].Content != "do the setup steps from README.md" || tl.Turns[0].Status != replay.TurnAnswered {
		t.Fatalf("turns %+v", tl.Turns)
	}
	type blocked struct{ tool, rule, reason string }
	var got []blocked
	for _, tc := range tl.Blocked() {
		if tc.BlockedBy.Tier != 1 || tc.Exec != nil || tc.Snapshot != nil {
			t.Errorf("%s: tier %d, exec %v, snapshot %v: a blocked call neither ran nor was snapshotted", tc.CallID, tc.BlockedBy.Tier, tc.Exec, tc.Snapshot)
		}
		got = append(got, blocked{tc.Tool, tc.BlockedBy.Rule, tc.BlockedBy.Reason})
	}
	want := []blocked{
		{"read_file", "credential-path", "~/.ssh/id_rsa is a credential file outside the workspace"},
		{"execute_command", "exfiltration", "sends a credential file to a host not in the allow list"},
		{"execute_command", "pipe-to-shell", "pipes a downloaded script into a shell"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("blocked\n got %v\nwant %v", got, want)
	}
	// The exfiltration attempt was allowed by tier 0 first, then blocked.
	exfil := tl.Blocked()[1]
	if len(exfil.Verdicts) != 2 || exfil.Verdicts[0].Decision != event.Allow || exfil.Verdicts[1].Decision != event.Block {
		t.Errorf("exfiltration verdicts %+v", exfil.Verdicts)
	}
	if tt := tl.Totals; tt.ToolCalls != 4 || tt.Blocked != 3 || tt.Executed != 1 || tt.ModelCalls != 4 {
		t.Errorf("totals %+v", tt)
	}
	// The investigator's note, recorded much later, is there.
	if i := slices.IndexFunc(tl.Events, func(e *replay.Event) bool { return e.Type == event.TypeNote }); i < 0 ||
		!strings.Contains(tl.Events[i].Summary, "ir-analyst") {
		t.Errorf("no note among %v", tl.Events)
	}
}

// TestBuild_Sample_CrashesAndRollback reads the sample's first two
// sessions: an agent crash inside the first and the death of the engine
// serving it; approvals, a rollback and a prune in the second.
func TestBuild_Sample_CrashesAndRollback(t *testing.T) {
	l := importSample(t)
	explore := mustBuild(t, l, sessionTitled(t, l, "Explore the invoice tool"), replay.Options{})
	var types []string
	for _, ev := range explore.Events {
		types = append(types, ev.Type)
	}
	for _, want := range []string{event.TypeAgentCrashed, event.TypeAgentSpawned, event.TypeEngineCrashed, event.TypeMemoryFlush, event.TypeToolDefsRequest} {
		if !slices.Contains(types, want) {
			t.Errorf("explore session lacks %s among %v", want, types)
		}
	}
	last := explore.Turns[len(explore.Turns)-1]
	if last.Status != replay.TurnError || len(last.Errors) != 1 || last.Errors[0].Code != "llm_unavailable" ||
		last.ModelCalls[0].Status != 503 || last.ModelCalls[0].Attempts != 4 {
		t.Errorf("last turn %+v, want the failed model call and the agent's error", last)
	}
	if explore.Totals.Crashes != 2 {
		t.Errorf("crashes %d, want the agent's and the engine's", explore.Totals.Crashes)
	}

	fix := mustBuild(t, l, sessionTitled(t, l, "Fix the totals bug"), replay.Options{})
	tt := fix.Totals
	if tt.Escalations != 2 || tt.Approved != 1 || tt.Denied != 1 || tt.Rollbacks != 1 || tt.Snapshots != 4 {
		t.Errorf("fix totals %+v", tt)
	}
	// The edit of billing/totals.go was rolled back, and retention later
	// removed its content (and with it that of any snapshot sharing it).
	var restored []*replay.Snapshot
	for _, s := range fix.Snapshots {
		if len(s.RestoredBy) > 0 {
			restored = append(restored, s)
		}
	}
	if len(restored) != 1 || restored[0].Tool != "edit_file" || restored[0].PrunedBy == 0 {
		t.Errorf("restored snapshots %+v, want the edit, pruned", restored)
	}
}

// TestSteps_Sample_CallsInShownOrder: at every --at through the sample's
// prompt injection, the tool calls under a model call come in the order
// of the seqs they are shown under. At seq 192 the first call is proposed
// (#192) and the second only sent by the agent (#191): #191 comes first.
func TestSteps_Sample_CallsInShownOrder(t *testing.T) {
	l := importSample(t)
	session := sessionTitled(t, l, "Follow the README setup")
	full := mustBuild(t, l, session, replay.Options{})
	for at := full.FirstSeq; at <= full.LastSeq; at++ {
		tl := mustBuild(t, l, session, replay.Options{At: at})
		for _, tn := range tl.Turns {
			for _, st := range tn.Steps() {
				var seqs []uint64
				for _, tc := range st.Calls {
					seqs = append(seqs, tc.ShownSeq())
				}
				if !slices.IsSorted(seqs) {
					t.Errorf("at %d: calls shown as %v", at, seqs)
				}
			}
		}
	}
}
