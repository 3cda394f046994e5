package engine

import (
	"testing"

	"github.com/opx-dev/opx/engine/judge"
	"github.com/opx-dev/opx/ledger/event"
)

func TestDecide(t *testing.T) {
	allow := func(tier int, rule string) judge.Verdict {
		return judge.Verdict{Decision: event.Allow, Tier: tier, Rule: rule}
	}
	esc := func(tier int, rule string) judge.Verdict {
		return judge.Verdict{Decision: event.Escalate, Tier: tier, Rule: rule}
	}
	block := func(tier int, rule string) judge.Verdict {
		return judge.Verdict{Decision: event.Block, Tier: tier, Rule: rule}
	}
	tests := []struct {
		name string
		vs   []judge.Verdict
		want string
	}{
		{"none", nil, "/0/"},
		{"allows", []judge.Verdict{allow(0, "a"), allow(1, "b")}, "allow/1/b"},
		{"escalation then allow", []judge.Verdict{esc(3, "v"), allow(1, "heuristics:none")}, "escalate/3/v"},
		{"tier 2 and tier 3", []judge.Verdict{esc(2, "m"), esc(3, "h")}, "escalate/3/h"},
		{"block wins", []judge.Verdict{esc(3, "v"), block(1, "b"), block(1, "c")}, "block/1/b"},
		{"unknown decision", []judge.Verdict{{Decision: "maybe", Rule: "x"}}, "block/0/pipeline:unknown-decision"},
	}
	for _, tt := range tests {
		v := Decide(tt.vs)
		if got := v.Decision + "/" + string(rune('0'+v.Tier)) + "/" + v.Rule; got != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, got, tt.want)
		}
	}
}
