package mcpproxy

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/engine/mcp"
)

// TestToolCallResult: what a proxied client gets for a tools/call — the
// upstream's result as received when the call ran, with opx's notes as
// text around it; otherwise a tool error with the pipeline's answer.
func TestToolCallResult(t *testing.T) {
	raw := json.RawMessage(`{"content":[{"type":"text","text":"hi"}],"structuredContent":{"n":1},"_meta":{"k":"v"}}`)
	ran := mcp.Result{Text: "hi", Raw: raw}
	tests := []struct {
		name string
		out  engine.ToolOutcome
		r    mcp.Result
		ran  bool
		want string
	}{
		{"as received", engine.ToolOutcome{Content: "hi"}, ran, true, string(raw)},
		{"warning in front", engine.ToolOutcome{Content: "[opx Shield: careful]\n\nhi"}, ran, true,
			`{"_meta":{"k":"v"},"content":[{"text":"[opx Shield: careful]","type":"text"},{"type":"text","text":"hi"}],"structuredContent":{"n":1}}`},
		{"note after, an error", engine.ToolOutcome{Content: "hi\n(opx: undone)", IsError: true}, ran, true,
			`{"_meta":{"k":"v"},"content":[{"type":"text","text":"hi"},{"text":"(opx: undone)","type":"text"}],"isError":true,"structuredContent":{"n":1}}`},
		{"blocked", engine.ToolOutcome{Content: "blocked by Shield (x): y", IsError: true}, mcp.Result{}, false,
			`{"content":[{"text":"blocked by Shield (x): y","type":"text"}],"isError":true}`},
		{"an error answer (no raw)", engine.ToolOutcome{Content: "MCP error -32602: bad", IsError: true}, mcp.Result{Text: "MCP error -32602: bad", IsError: true}, true,
			`{"content":[{"text":"MCP error -32602: bad","type":"text"}],"isError":true}`},
		{"replaced", engine.ToolOutcome{Content: "withheld"}, ran, true, `{"content":[{"text":"withheld","type":"text"}],"isError":false}`},
		{"over the cap", engine.ToolOutcome{Content: "cut"}, mcp.Result{Text: "cut", Raw: json.RawMessage(`"` + strings.Repeat("a", proxyMaxResult) + `"`)}, true,
			`{"content":[{"text":"cut","type":"text"}],"isError":false}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(toolCallResult(tc.out, tc.r, tc.ran)); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// TestProxyEnv: a proxy's --env variables over a spec's, bounded; the
// spec's own map is not changed.
func TestProxyEnv(t *testing.T) {
	base := map[string]string{"A": "1", "B": "2"}
	got, err := proxyEnv(base, map[string]string{"B": "x", "C": "3"})
	if err != nil || got["A"] != "1" || got["B"] != "x" || got["C"] != "3" || base["B"] != "2" {
		t.Fatalf("%v %v (base %v)", got, err, base)
	}
	for name, extra := range map[string]map[string]string{
		"empty name": {"": "x"},
		"= in name":  {"A=B": "x"},
		"NUL value":  {"A": "x\x00y"},
		"long value": {"A": strings.Repeat("v", proxyMaxArg*8+1)},
	} {
		if _, err := proxyEnv(base, extra); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	many := map[string]string{}
	for i := range proxyMaxEnv + 1 {
		many[strings.Repeat("V", i+1)] = "x"
	}
	if _, err := proxyEnv(nil, many); err == nil {
		t.Errorf("%d variables accepted", len(many))
	}
}
