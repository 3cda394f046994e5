package replay

import (
	"testing"

	"github.com/opx-dev/opx/ledger/event"
)

// TestShortInput: each CLI's tools in a line: Claude Code's, Codex's
// (a command as argv, a patch), Gemini CLI's.
func TestShortInput(t *testing.T) {
	for _, tt := range []struct{ tool, input, want string }{
		{"Bash", `{"command":"go test ./...","description":"run the tests"}`, "go test ./..."},
		{"Read", `{"file_path":"/ws/a/b.go","offset":10}`, "a/b.go"},
		{"Grep", `{"pattern":"TODO","path":"/ws/src"}`, "src, pattern TODO"},
		{"WebFetch", `{"url":"https://example.com/x","prompt":"summarise"}`, "https://example.com/x"},
		{"WebSearch", `{"query":"opx ledger"}`, "query opx ledger"},
		{"Task", `{"description":"look around","prompt":"..."}`, "look around"},
		{"exec_command", `{"cmd":["bash","-lc","ls -la"],"workdir":"/ws"}`, "ls -la"},
		{"shell", `{"command":["bash","-lc","make"]}`, "make"},
		{"apply_patch", `{"command":"*** Begin Patch\n*** Update File: README.md\n@@\n-a\n+b\n*** Add File: /ws/new.txt\n+x\n*** End Patch\n"}`, "patch: update README.md, add new.txt"},
		{"run_shell_command", `{"command":"npm test","directory":"web"}`, "npm test"},
		{"read_many_files", `{"paths":["a.go","b.go"]}`, "a.go, b.go"},
		{"mcp__fs__write", `{"x":1}`, `{"x":1}`},
		{"Read", `not json`, "not json"},
	} {
		got := shortInput(&event.HookToolCall{AgentTool: tt.tool, Input: tt.input, InputSize: int64(len(tt.input))}, "/ws")
		if got != tt.want {
			t.Errorf("%s %s: %q, want %q", tt.tool, tt.input, got, tt.want)
		}
	}
	if got := shortInput(&event.HookToolCall{AgentTool: "Write", InputBlob: "ab12ab12ab12ab12", InputSize: 90000}, ""); got != "(90000 bytes, kept as blob ab12ab12ab12)" {
		t.Errorf("a blob input: %q", got)
	}
}
