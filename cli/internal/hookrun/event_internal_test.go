package hookrun

import (
	"testing"

	"github.com/opx-dev/opx/agents/hookproto"
)

// FuzzSniffKind: the kind read from an event that could not be decoded
// is the decoder's whenever the decoder takes the event, and anything
// else is read without a panic.
func FuzzSniffKind(f *testing.F) {
	for _, s := range []string{
		`{"session_id":"s","cwd":"/w","hook_event_name":"PreToolUse","tool_name":"Bash","tool_use_id":"t","tool_input":{"command":"ls"}}`,
		`{"session_id":"s","cwd":"/w","hook_event_name":"SessionStart","source":"startup"}`,
		`{"session_id":"s","cwd":"/w","hook_event_name":"BeforeTool","tool_name":"x","tool_input":{"hook_event_name":"Stop"}}`,
		`{"hook_event_name":"Stop","session_id":`,
		`{"tool_input":{"hook_event_name":"Stop"},"hook_event_name":"PreToolUse"`,
		`{"hook_event_name":"\u0000"}`,
		`[]`, ``,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		for _, agent := range hookproto.Agents {
			name, kind := sniffKind(agent, []byte(raw))
			ev, err := hookproto.Parse(agent, []byte(raw), nil)
			if err == nil && (kind != ev.Kind || name != ev.Name) {
				t.Fatalf("%s: sniffed %q %s, decoded %q %s", agent, name, kind, ev.Name, ev.Kind)
			}
			if name == "" && kind != hookproto.KindPreTool {
				t.Fatalf("%s: no name, yet kind %s", agent, kind)
			}
		}
	})
}
