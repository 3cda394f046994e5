package engine

import (
	"testing"

	"github.com/opx-dev/opx/engine/judge"
	"github.com/opx-dev/opx/ledger/event"
)

// TestSubAgents_NoneLinked: an engine built without engine/subagent
// refuses a configuration that enables sub-agents, and otherwise blocks
// every call that names one (no sub-agent is known). Not parallel: it
// swaps the registered maker.
func TestSubAgents_NoneLinked(t *testing.T) {
	saved := newSubAgents.get()
	defer UseSubAgents(saved)
	UseSubAgents(nil)

	if _, err := makeSubAgents(AgentsConfig{Enabled: true}); err == nil {
		t.Fatal("sub-agents enabled without engine/subagent: no error")
	}
	s, err := makeSubAgents(AgentsConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if v := s.Restrict(judge.Proposal{SubAgentID: "sub_x", Tool: "read_file"}); v == nil || v.Decision != event.Block || v.Rule != "subagent:not-granted" {
		t.Errorf("Restrict of an unknown sub-agent's call: %+v", v)
	}
	if v := s.Restrict(judge.Proposal{Tool: "read_file"}); v != nil {
		t.Errorf("Restrict of the agent's own call: %+v", v)
	}
	if release, why := s.Admit(judge.Proposal{SubAgentID: "sub_x"}); release != nil || why == "" {
		t.Errorf("Admit of an unknown sub-agent's call: refusal %q", why)
	}
	if s.ByToken("tok") != nil || s.Get("sub_x") != nil || s.AgentTools() != nil {
		t.Error("a set with no sub-agents found one")
	}
}
