package hookproto_test

import (
	"encoding/json"
	"testing"

	"github.com/opx-dev/opx/agents/hookproto"
)

// FuzzParse: no input panics Parse, and an event it accepts keeps its
// promises (ids and paths checked, tool input an object, response bound).
func FuzzParse(f *testing.F) {
	for _, s := range []string{claudePre, claudePost, codexPre, codexPost, geminiPre, geminiPost,
		`{"session_id":"s","cwd":"/w","hook_event_name":"X","a":{"b":[1,2,{"c":null}]}}`, `{"a":1,"a":2}`, `[]`, `{`} {
		for i := range hookproto.Agents {
			f.Add(uint8(i), []byte(s))
		}
	}
	f.Fuzz(func(t *testing.T, agent uint8, raw []byte) {
		a := hookproto.Agents[int(agent)%len(hookproto.Agents)]
		e, err := hookproto.Parse(a, raw, func(string) string { return "/p" })
		if err != nil {
			return
		}
		if e.SessionID == "" || e.Cwd == "" || e.Cwd[0] != '/' || e.Name == "" {
			t.Fatalf("accepted %+v", e)
		}
		if e.Kind == hookproto.KindPreTool || e.Kind == hookproto.KindPostTool {
			if e.Tool == "" || e.ToolUseID == "" || !json.Valid(e.ToolInput) || e.ToolInput[0] != '{' {
				t.Fatalf("accepted tool event %+v", e)
			}
		}
		if len(e.ToolResponse) > hookproto.MaxToolResponse || len(e.ToolResponseText) > hookproto.MaxToolResponse {
			t.Fatalf("response over the bound")
		}
		for _, d := range []hookproto.Decision{hookproto.Allow, hookproto.Deny, hookproto.Ask} {
			_, _ = hookproto.Encode(a, e.Kind, hookproto.Answer{Decision: d, Reason: e.Prompt, UpdatedInput: e.ToolInput})
		}
	})
}
