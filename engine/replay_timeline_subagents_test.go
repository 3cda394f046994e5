package engine_test

import (
	"context"
	"testing"

	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/replay"
)

// TestTimeline_SubAgents_SuffixedIDs: a model that reuses a call id in
// one message spawns sub_X and then sub_X_2 (the engine suffixes the
// colliding id). The timeline of the engine's ledger links the parent's
// cancel_agent and agent_result about sub_X_2 to sub_X_2, not to sub_X,
// whose id is a prefix of it, and shows sub_X_2's end as collected.
func TestTimeline_SubAgents_SuffixedIDs(t *testing.T) {
	r := startSubRig(t, engine.AgentsConfig{})
	if res := r.call(t, "c1", "spawn_agent", `{"task":"x"}`); res.IsError {
		t.Fatal(res.Content)
	}
	l1 := <-r.launches
	if res := r.call(t, "c1", "spawn_agent", `{"task":"y"}`); res.IsError {
		t.Fatal(res.Content)
	}
	l2 := <-r.launches
	if l2.SubAgentID != l1.SubAgentID+"_2" {
		t.Fatalf("ids %s and %s, want the second suffixed", l1.SubAgentID, l2.SubAgentID)
	}
	if res := r.call(t, "c2", "cancel_agent", `{"id":"`+l2.SubAgentID+`"}`); res.IsError {
		t.Fatal(res.Content)
	}
	if res := r.call(t, "c3", "agent_result", `{"id":"`+l2.SubAgentID+`"}`); !res.IsError && res.Content == "" {
		t.Fatal("agent_result answered nothing")
	}
	if err := r.l.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	var session string
	for _, e := range r.entries(t) {
		if e.Type == event.TypeSubAgentSpawned {
			session = e.Session
		}
	}
	tl, err := replay.Build(r.l, session, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, turn := range tl.Turns {
		for _, tc := range turn.ToolCalls {
			if (tc.CallID == "c2" || tc.CallID == "c3") && tc.AboutSubAgent != l2.SubAgentID {
				t.Errorf("%s %s is shown as about %q, want %s", tc.Tool, tc.CallID, tc.AboutSubAgent, l2.SubAgentID)
			}
		}
	}
	for _, sa := range tl.SubAgents() {
		switch {
		case sa.ID == l1.SubAgentID && len(sa.ParentCalls) != 0:
			t.Errorf("%s has parent calls %v, want none", sa.ID, sa.ParentCalls)
		case sa.ID == l2.SubAgentID && (sa.CollectedSeq == 0 || len(sa.ParentCalls) != 2):
			t.Errorf("%s: collected at %d, parent calls %v; want collected by c2, calls c2 and c3", sa.ID, sa.CollectedSeq, sa.ParentCalls)
		}
	}
}
