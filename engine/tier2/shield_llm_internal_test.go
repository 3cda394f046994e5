package tier2

import (
	"strings"
	"testing"

	"github.com/opx-dev/opx/engine/llm"
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
