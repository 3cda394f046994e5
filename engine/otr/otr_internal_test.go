package otr

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/opx-dev/opx/engine/executor"
	"github.com/opx-dev/opx/engine/judge"
)

// TestOTR_Mutates: in an off-the-record session, what could change
// something is blocked, beyond the tools marked mutating.
func TestOTR_Mutates(t *testing.T) {
	for _, tc := range []struct {
		tool, args string
		known      bool
		mutating   bool
		blocked    string // part of the reason, "" for allowed
	}{
		{"read_file", `{"path":"a"}`, true, false, ""},
		{"search_files", `{"pattern":"x"}`, true, false, ""},
		{"git_log", `{}`, true, false, ""},
		{"write_file", `{"path":"a","content":"x"}`, true, true, "changes"},
		{"memory_append", `{"text":"x"}`, true, true, "changes"},
		{"git_commit", `{"message":"x"}`, true, true, "changes"},
		{"execute_command", `{"command":"ls"}`, true, true, "changes"},
		{"mcp_thing", `{}`, false, false, "not a known tool"},
		{"http_request", `{"url":"https://example.com"}`, true, false, ""},
		{"http_request", `{"url":"https://example.com","method":"get"}`, true, false, ""},
		{"http_request", `{"url":"https://example.com","method":"HEAD"}`, true, false, ""},
		{"http_request", `{"url":"https://example.com","method":"POST"}`, true, false, "method POST"},
		{"http_request", `{"url":"https://example.com","method":"DELETE"}`, true, false, "method DELETE"},
		{"http_request", `{"url":"https://example.com","body":""}`, true, false, "a body"},
		{"http_request", `{"url":"https://example.com","method":7}`, true, false, "do not parse"},
		{"http_request", `{"url":"https://example.com","headers":{"X-HTTP-Method-Override":"DELETE"}}`, true, false, "another method"},
		{"http_request", `{"url":"https://example.com","headers":{"x-method-override":"PUT"}}`, true, false, "another method"},
		{"http_request", `{"url":"https://example.com","headers":{"Accept":"text/html"}}`, true, false, ""},
	} {
		p := judge.Proposal{Tool: tc.tool, Args: json.RawMessage(tc.args), Known: tc.known, Def: executor.ToolDef{Name: tc.tool, Mutating: tc.mutating}}
		got := Mutates(p)
		if (got == "") != (tc.blocked == "") || !strings.Contains(got, tc.blocked) {
			t.Errorf("%s %s: %q, want blocked %q", tc.tool, tc.args, got, tc.blocked)
		}
	}
}
