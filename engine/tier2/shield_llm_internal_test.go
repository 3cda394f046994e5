package engine

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opx-dev/opx/engine/llm"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/ledgertest"
)

func TestParseTier2Answer(t *testing.T) {
	tests := []struct {
		text, decision, errPart string
		calls                   bool
	}{
		{text: `{"decision":"allow","reason":"fine"}`, decision: "allow"},
		{text: "  {\"reason\":\"no\",\"decision\":\"block\"}\n", decision: "block"},
		{text: "```json\n{\"decision\":\"allow\",\"reason\":\"fenced\"}\n```", decision: "allow"},
		{text: "```\n{\"decision\":\"block\",\"reason\":\"fenced\"}\n```", decision: "block"},
		{text: `{"decision":"escalate","reason":"ask"}`, errPart: "not allow or block"},
		{text: `{"decision":"ALLOW","reason":"x"}`, errPart: "not allow or block"},
		{text: `{"decision":"allow"}`, errPart: "no reason"},
		{text: `{"decision":"allow","reason":"  "}`, errPart: "no reason"},
		{text: `{"decision":"allow","reason":"x","confidence":1}`, errPart: "unknown field"},
		{text: `{"decision":"allow","reason":"x"} {"decision":"block","reason":"y"}`, errPart: "more than one"},
		{text: `Sure: {"decision":"allow","reason":"x"}`, errPart: "not one JSON object"},
		{text: `{"decision":"allow","reason":"x"} trailing`, errPart: "more than one"},
		{text: ``, errPart: "not one JSON object"},
		{text: `{"decision":"allow","reason":"x"}`, calls: true, errPart: "called a tool"},
	}
	for _, tt := range tests {
		x := &llm.Exchange{Text: tt.text}
		if tt.calls {
			x.ToolCalls = []llm.ToolCall{{ID: "1", Name: "read_file", Arguments: "{}"}}
		}
		a, err := parseTier2Answer(x)
		switch {
		case tt.errPart != "" && (err == nil || !strings.Contains(err.Error(), tt.errPart)):
			t.Errorf("%q: err %v, want one containing %q", tt.text, err, tt.errPart)
		case tt.errPart == "" && (err != nil || a.Decision != tt.decision):
			t.Errorf("%q: %+v, %v; want %s", tt.text, a, err, tt.decision)
		}
	}
}

func TestDecide(t *testing.T) {
	allow := func(tier int, rule string) Verdict { return Verdict{Decision: event.Allow, Tier: tier, Rule: rule} }
	esc := func(tier int, rule string) Verdict { return Verdict{Decision: event.Escalate, Tier: tier, Rule: rule} }
	block := func(tier int, rule string) Verdict { return Verdict{Decision: event.Block, Tier: tier, Rule: rule} }
	tests := []struct {
		name string
		vs   []Verdict
		want string
	}{
		{"none", nil, "/0/"},
		{"allows", []Verdict{allow(0, "a"), allow(1, "b")}, "allow/1/b"},
		{"escalation then allow", []Verdict{esc(3, "v"), allow(1, "heuristics:none")}, "escalate/3/v"},
		{"tier 2 and tier 3", []Verdict{esc(2, "m"), esc(3, "h")}, "escalate/3/h"},
		{"block wins", []Verdict{esc(3, "v"), block(1, "b"), block(1, "c")}, "block/1/b"},
		{"unknown decision", []Verdict{{Decision: "maybe", Rule: "x"}}, "block/0/pipeline:unknown-decision"},
	}
	for _, tt := range tests {
		v := Decide(tt.vs)
		if got := v.Decision + "/" + string(rune('0'+v.Tier)) + "/" + v.Rule; got != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, got, tt.want)
		}
	}
}

// TestCountTier2Calls: only today's tier 2 requests count, found by a
// binary search over a ledger whose first entries are from earlier days.
func TestCountTier2Calls(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	l, err := ledger.Create(path, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		l.Close()
		ledgertest.MustVerify(t, path, event.StrictOptions())
	})
	rec := NewRecorder(l)
	ctx := context.Background()
	req := func(id string) {
		body := []byte(id)
		if _, err := rec.Record(ctx, ledger.Sync, "s", &event.LLMRequest{RequestID: id, Provider: "scripted", Model: "m",
			Blob: ledger.Sum(body).String(), Size: int64(len(body))}, body); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 5; i++ {
		req("tier2_a")
		req("req_1")
	}
	now := time.Now().UTC()
	if n, err := countTier2Calls(l, dayStart(now)); err != nil || n != 5 {
		t.Errorf("today: %d, %v; want 5", n, err)
	}
	if n, err := countTier2Calls(l, now.Add(time.Hour)); err != nil || n != 0 {
		t.Errorf("from an hour ahead: %d, %v; want 0", n, err)
	}
	e, err := NewLLMEvaluator(LLMEvaluatorConfig{Recorder: rec, Provider: llm.NewScripted(&llm.Transcript{Model: "m"}), Budget: 7})
	if err != nil {
		t.Fatal(err)
	}
	if used, budget := e.Used(); used != 5 || budget != 7 {
		t.Errorf("used %d of %d, want 5 of 7", used, budget)
	}
	// The next UTC day starts a new count.
	e.now = func() time.Time { return now.Add(24 * time.Hour) }
	if used, _ := e.Used(); used != 0 {
		t.Errorf("next day: used %d", used)
	}
}
