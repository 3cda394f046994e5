package hookproto_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/opx-dev/opx/agents/hookproto"
)

// Events as the pinned CLIs send them (internal/agenttest/doc.go),
// shortened.
const (
	claudePre  = `{"session_id":"3f1c2b7e-5d4a-4e0f-9b1a-2c3d4e5f6a7b","transcript_path":"/home/u/.claude/projects/-w/3f1c.jsonl","cwd":"/w","prompt_id":"p-1","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"echo tour > shell.txt","description":"write"},"tool_use_id":"toolu_01ABCdef","effort":"medium"}`
	claudePost = `{"session_id":"3f1c2b7e-5d4a-4e0f-9b1a-2c3d4e5f6a7b","transcript_path":"/home/u/.claude/projects/-w/3f1c.jsonl","cwd":"/w","prompt_id":"p-1","permission_mode":"default","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"sleep 9"},"tool_use_id":"toolu_01ABCdef","tool_response":{"stdout":"","stderr":"","interrupted":true,"isImage":false,"noOutputExpected":false},"duration_ms":1503}`
	codexPre   = `{"session_id":"019a0c1e-0000-7000-8000-000000000001","turn_id":"019a0c1e-0000-7000-8000-000000000002","transcript_path":null,"cwd":"/w","hook_event_name":"PreToolUse","model":"gpt-5.5","permission_mode":"bypassPermissions","tool_name":"apply_patch","tool_input":{"command":"*** Begin Patch\n*** Add File: a.txt\n+a\n*** End Patch\n"},"tool_use_id":"call_abc123"}`
	codexPost  = `{"session_id":"019a0c1e-0000-7000-8000-000000000001","turn_id":"t1","transcript_path":"/h/.codex/sessions/r.jsonl","cwd":"/w","hook_event_name":"PostToolUse","model":"gpt-5.5","permission_mode":"bypassPermissions","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"call_1","tool_response":"a.txt\n"}`
	geminiPre  = `{"session_id":"9b2f7a10-1111-4222-8333-444455556666","transcript_path":"/h/.gemini/tmp/x/chats/s.json","cwd":"/w","hook_event_name":"BeforeTool","timestamp":"2026-12-01T10:00:00.123Z","tool_name":"run_shell_command","tool_input":{"command":"echo tour > shell.txt"}}`
	geminiPost = `{"session_id":"9b2f7a10-1111-4222-8333-444455556666","transcript_path":"/h/.gemini/tmp/x/chats/s.json","cwd":"/w","hook_event_name":"AfterTool","timestamp":"2026-12-01T10:00:01Z","tool_name":"run_shell_command","tool_input":{ "command" : "echo tour > shell.txt" },"tool_response":{"llmContent":"ok","returnDisplay":"ok","error":{"message":"exit 1"}}}`
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestDecode_Events(t *testing.T) {
	tests := []struct {
		name  string
		agent hookproto.Agent
		in    string
		env   map[string]string
		check func(t *testing.T, e *hookproto.Event)
	}{
		{"claude pre", hookproto.Claude, claudePre, map[string]string{"CLAUDE_PROJECT_DIR": "/w"}, func(t *testing.T, e *hookproto.Event) {
			want(t, e.Kind, hookproto.KindPreTool)
			want(t, e.SessionID, "3f1c2b7e-5d4a-4e0f-9b1a-2c3d4e5f6a7b")
			want(t, e.ProjectDir, "/w")
			want(t, e.Tool, "Bash")
			want(t, e.ToolUseID, "toolu_01ABCdef")
			want(t, e.PermissionMode, "default")
			want(t, e.PromptID, "p-1")
			want(t, string(e.ToolInput), `{"command":"echo tour > shell.txt","description":"write"}`)
			want(t, e.TranscriptPath, "/home/u/.claude/projects/-w/3f1c.jsonl")
		}},
		{"claude post", hookproto.Claude, claudePost, nil, func(t *testing.T, e *hookproto.Event) {
			want(t, e.Kind, hookproto.KindPostTool)
			want(t, e.Interrupted, true)
			want(t, e.HasDuration, true)
			want(t, e.Duration, 1503*time.Millisecond)
			want(t, e.ToolResponseBytes, len(e.ToolResponse))
		}},
		{"claude failure", hookproto.Claude, `{"session_id":"s","cwd":"/w","hook_event_name":"PostToolUseFailure","tool_name":"Bash","tool_input":{},"tool_use_id":"t","error":"Exit code 1"}`, nil, func(t *testing.T, e *hookproto.Event) {
			want(t, e.Kind, hookproto.KindPostTool)
			want(t, e.Failed, true)
			want(t, e.Error, "Exit code 1")
		}},
		{"claude prompt", hookproto.Claude, `{"session_id":"s","cwd":"/w","hook_event_name":"UserPromptSubmit","prompt":"fix it","prompt_id":"p","permission_mode":"default"}`, nil, func(t *testing.T, e *hookproto.Event) {
			want(t, e.Kind, hookproto.KindPrompt)
			want(t, e.Prompt, "fix it")
		}},
		{"claude stop", hookproto.Claude, `{"session_id":"s","cwd":"/w","hook_event_name":"Stop","last_assistant_message":"done","stop_hook_active":false,"background_tasks":[]}`, nil, func(t *testing.T, e *hookproto.Event) {
			want(t, e.Kind, hookproto.KindStop)
			want(t, e.Response, "done")
		}},
		{"claude end", hookproto.Claude, `{"session_id":"s","cwd":"/w","hook_event_name":"SessionEnd","reason":"other"}`, nil, func(t *testing.T, e *hookproto.Event) {
			want(t, e.Kind, hookproto.KindSessionEnd)
			want(t, e.Reason, "other")
		}},
		{"claude unknown event", hookproto.Claude, `{"session_id":"s","cwd":"/w","hook_event_name":"SomethingNew2027","whatever":[1,{"a":2}]}`, nil, func(t *testing.T, e *hookproto.Event) {
			want(t, e.Kind, hookproto.KindOther)
			want(t, e.Name, "SomethingNew2027")
		}},
		{"codex pre", hookproto.Codex, codexPre, map[string]string{"CLAUDE_PROJECT_DIR": "/elsewhere"}, func(t *testing.T, e *hookproto.Event) {
			want(t, e.Kind, hookproto.KindPreTool)
			want(t, e.Model, "gpt-5.5")
			want(t, e.TurnID, "019a0c1e-0000-7000-8000-000000000002")
			want(t, e.TranscriptPath, "")
			want(t, e.ProjectDir, "") // Codex sets no project variable
			want(t, e.Tool, "apply_patch")
		}},
		{"codex post", hookproto.Codex, codexPost, nil, func(t *testing.T, e *hookproto.Event) {
			want(t, string(e.ToolResponse), `"a.txt\n"`)
			want(t, e.Failed, false)
		}},
		{"codex session start", hookproto.Codex, `{"session_id":"s","cwd":"/w","hook_event_name":"SessionStart","model":"gpt-5.5","permission_mode":"default","source":"startup","transcript_path":null}`, nil, func(t *testing.T, e *hookproto.Event) {
			want(t, e.Kind, hookproto.KindSessionStart)
			want(t, e.Source, "startup")
		}},
		{"gemini pre", hookproto.Gemini, geminiPre, map[string]string{"GEMINI_PROJECT_DIR": "/w"}, func(t *testing.T, e *hookproto.Event) {
			want(t, e.Kind, hookproto.KindPreTool)
			want(t, e.ToolUseIDDerived, true)
			want(t, e.ToolUseID, hookproto.DeriveToolUseID(e.SessionID, "run_shell_command", json.RawMessage(`{"command":"echo tour > shell.txt"}`)))
			want(t, e.Timestamp, time.Date(2026, 12, 1, 10, 0, 0, 123e6, time.UTC))
			want(t, e.ProjectDir, "/w")
		}},
		{"gemini post pairs with pre", hookproto.Gemini, geminiPost, nil, func(t *testing.T, e *hookproto.Event) {
			pre, err := hookproto.Parse(hookproto.Gemini, []byte(geminiPre), nil)
			if err != nil {
				t.Fatal(err)
			}
			want(t, e.ToolUseID, pre.ToolUseID)
			want(t, e.Failed, true)
			want(t, e.Error, "exit 1")
		}},
		{"gemini prompt and stop", hookproto.Gemini, `{"session_id":"s","cwd":"/w","hook_event_name":"AfterAgent","timestamp":"x","prompt":"p","prompt_response":"r","stop_hook_active":false}`, nil, func(t *testing.T, e *hookproto.Event) {
			want(t, e.Kind, hookproto.KindStop)
			want(t, e.Response, "r")
			want(t, strings.Join(e.Ignored, ","), "timestamp")
		}},
		{"gemini model event is other", hookproto.Gemini, `{"session_id":"s","cwd":"/w","hook_event_name":"BeforeModel","llm_request":{"contents":[]}}`, nil, func(t *testing.T, e *hookproto.Event) {
			want(t, e.Kind, hookproto.KindOther)
		}},
		{"wrong type of an informative field is ignored", hookproto.Claude, `{"session_id":"s","cwd":"/w","hook_event_name":"SessionStart","model":{"id":"x"},"duration_ms":-5,"source":"a\u001b[2Jb"}`, nil, func(t *testing.T, e *hookproto.Event) {
			want(t, strings.Join(e.Ignored, ","), "model,source,duration_ms")
			want(t, e.Model, "")
			want(t, e.Source, "")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := hookproto.Decode(tt.agent, strings.NewReader(tt.in), env(tt.env))
			if err != nil {
				t.Fatal(err)
			}
			want(t, e.Agent, tt.agent)
			want(t, string(e.Raw), tt.in)
			tt.check(t, e)
		})
	}
}

func want[T comparable](t *testing.T, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestDecode_Refused(t *testing.T) {
	long := strings.Repeat("a", hookproto.MaxIDBytes+1)
	tests := []struct {
		name    string
		agent   hookproto.Agent
		in      string
		env     map[string]string
		wantErr error
	}{
		{"empty", hookproto.Claude, ``, nil, hookproto.ErrMalformed},
		{"not json", hookproto.Claude, `session_id=1`, nil, hookproto.ErrMalformed},
		{"truncated", hookproto.Claude, claudePre[:100], nil, hookproto.ErrMalformed},
		{"array", hookproto.Claude, `[` + claudePre + `]`, nil, hookproto.ErrMalformed},
		{"two objects", hookproto.Claude, claudePre + claudePre, nil, hookproto.ErrMalformed},
		{"trailing garbage", hookproto.Claude, claudePre + ` x`, nil, hookproto.ErrMalformed},
		{"invalid utf-8", hookproto.Claude, strings.Replace(claudePre, "tour", "t\xffur", 1), nil, hookproto.ErrMalformed},
		{"duplicate top-level key", hookproto.Claude, `{"session_id":"a","session_id":"b","cwd":"/w","hook_event_name":"Stop"}`, nil, hookproto.ErrMalformed},
		{"duplicate tool name", hookproto.Claude, strings.Replace(claudePre, `"tool_name":"Bash"`, `"tool_name":"Read","tool_name":"Bash"`, 1), nil, hookproto.ErrMalformed},
		{"duplicate nested key", hookproto.Claude, strings.Replace(claudePre, `{"command":"echo`, `{"command":"rm -rf /","command":"echo`, 1), nil, hookproto.ErrMalformed},
		{"too deep", hookproto.Claude, `{"session_id":"s","cwd":"/w","hook_event_name":"Stop","x":` + strings.Repeat("[", hookproto.MaxDepth) + strings.Repeat("]", hookproto.MaxDepth) + `}`, nil, hookproto.ErrMalformed},
		{"session id wrong type", hookproto.Claude, `{"session_id":7,"cwd":"/w","hook_event_name":"Stop"}`, nil, hookproto.ErrMalformed},
		{"no event name", hookproto.Claude, `{"session_id":"s","cwd":"/w"}`, nil, hookproto.ErrBadField},
		{"event name with escape", hookproto.Claude, `{"session_id":"s","cwd":"/w","hook_event_name":"Stop\u001b[31m"}`, nil, hookproto.ErrBadField},
		{"no session id", hookproto.Claude, `{"cwd":"/w","hook_event_name":"Stop"}`, nil, hookproto.ErrBadID},
		{"empty session id", hookproto.Claude, `{"session_id":"","cwd":"/w","hook_event_name":"Stop"}`, nil, hookproto.ErrBadID},
		{"session id with newline", hookproto.Claude, `{"session_id":"abc\ndef","cwd":"/w","hook_event_name":"Stop"}`, nil, hookproto.ErrBadID},
		{"session id with NUL", hookproto.Codex, `{"session_id":"abc\u0000","cwd":"/w","hook_event_name":"Stop"}`, nil, hookproto.ErrBadID},
		{"session id with slash", hookproto.Gemini, `{"session_id":"../../etc","cwd":"/w","hook_event_name":"SessionEnd"}`, nil, hookproto.ErrBadID},
		{"session id too long", hookproto.Claude, `{"session_id":"` + long + `","cwd":"/w","hook_event_name":"Stop"}`, nil, hookproto.ErrBadID},
		{"tool use id with space", hookproto.Claude, strings.Replace(claudePre, "toolu_01ABCdef", "toolu 01", 1), nil, hookproto.ErrBadID},
		{"claude pre without tool use id", hookproto.Claude, strings.Replace(claudePre, `"tool_use_id":"toolu_01ABCdef",`, ``, 1), nil, hookproto.ErrBadID},
		{"no cwd", hookproto.Claude, `{"session_id":"s","hook_event_name":"Stop"}`, nil, hookproto.ErrBadPath},
		{"relative cwd", hookproto.Claude, `{"session_id":"s","cwd":"w","hook_event_name":"Stop"}`, nil, hookproto.ErrBadPath},
		{"unclean cwd", hookproto.Claude, `{"session_id":"s","cwd":"/w/../etc","hook_event_name":"Stop"}`, nil, hookproto.ErrBadPath},
		{"cwd trailing slash", hookproto.Claude, `{"session_id":"s","cwd":"/w/","hook_event_name":"Stop"}`, nil, hookproto.ErrBadPath},
		{"cwd with newline", hookproto.Claude, `{"session_id":"s","cwd":"/w\n/x","hook_event_name":"Stop"}`, nil, hookproto.ErrBadPath},
		{"relative transcript", hookproto.Claude, `{"session_id":"s","cwd":"/w","transcript_path":"t.jsonl","hook_event_name":"Stop"}`, nil, hookproto.ErrBadPath},
		{"relative project dir", hookproto.Claude, `{"session_id":"s","cwd":"/w","hook_event_name":"Stop"}`, map[string]string{"CLAUDE_PROJECT_DIR": "."}, hookproto.ErrBadPath},
		{"pre without tool", hookproto.Gemini, `{"session_id":"s","cwd":"/w","hook_event_name":"BeforeTool","tool_input":{}}`, nil, hookproto.ErrBadField},
		{"tool input not an object", hookproto.Gemini, `{"session_id":"s","cwd":"/w","hook_event_name":"BeforeTool","tool_name":"x","tool_input":"rm -rf /"}`, nil, hookproto.ErrMalformed},
		{"tool name with bidi override", hookproto.Claude, strings.Replace(claudePre, `"Bash"`, `"Re\u202ead"`, 1), nil, hookproto.ErrBadField},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := hookproto.Decode(tt.agent, strings.NewReader(tt.in), env(tt.env))
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err %v (event %+v), want %v", err, e, tt.wantErr)
			}
			if e != nil {
				t.Errorf("an event came back with the error: %+v", e)
			}
		})
	}
}

func TestDecode_UnknownAgent(t *testing.T) {
	if _, err := hookproto.Decode("cursor", strings.NewReader(claudePre), nil); !errors.Is(err, hookproto.ErrUnknownAgent) {
		t.Fatalf("err %v", err)
	}
}

// countingReader is an endless stream that counts what was read of it.
type countingReader struct{ n int64 }

func (r *countingReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	r.n += int64(len(p))
	return len(p), nil
}

// TestDecode_TooLarge: a 50 MB (here: endless) input is refused after
// reading at most one byte past the cap.
func TestDecode_TooLarge(t *testing.T) {
	r := &countingReader{}
	_, err := hookproto.Decode(hookproto.Claude, r, nil)
	if !errors.Is(err, hookproto.ErrTooLarge) {
		t.Fatalf("err %v", err)
	}
	if r.n > hookproto.MaxEventBytes+1 {
		t.Errorf("read %d bytes, cap is %d", r.n, hookproto.MaxEventBytes)
	}
	// Exactly at the cap is read (and judged as JSON).
	at := bytes.Repeat([]byte(" "), hookproto.MaxEventBytes-len(claudePre))
	if _, err := hookproto.Decode(hookproto.Claude, io.MultiReader(strings.NewReader(claudePre), bytes.NewReader(at)), nil); err != nil {
		t.Errorf("an event of exactly MaxEventBytes: %v", err)
	}
}

// TestDecode_LargeResponse: a tool response over MaxToolResponse keeps a
// valid UTF-8 prefix, not the whole.
func TestDecode_LargeResponse(t *testing.T) {
	big := strings.Repeat("é", hookproto.MaxToolResponse/2+10)
	in := `{"session_id":"s","cwd":"/w","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{},"tool_use_id":"t","tool_response":"` + big + `"}`
	e, err := hookproto.Decode(hookproto.Codex, strings.NewReader(in), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !e.ToolResponseTruncated || e.ToolResponse != nil || len(e.ToolResponseText) > hookproto.MaxToolResponse || e.ToolResponseBytes != len(big)+2 {
		t.Errorf("truncated %v, response %d bytes, text %d bytes, size %d", e.ToolResponseTruncated, len(e.ToolResponse), len(e.ToolResponseText), e.ToolResponseBytes)
	}
	if !strings.HasPrefix(big, strings.TrimPrefix(e.ToolResponseText, `"`)) {
		t.Error("the text kept is not a prefix of the response")
	}
}

// TestDeriveToolUseID: white space does not change it; the session, the
// tool and the input each do.
func TestDeriveToolUseID(t *testing.T) {
	a := hookproto.DeriveToolUseID("s", "read_file", json.RawMessage(`{"file_path":"a"}`))
	if b := hookproto.DeriveToolUseID("s", "read_file", json.RawMessage("{ \"file_path\" :\n\"a\" }")); a != b {
		t.Errorf("white space changed the id: %s, %s", a, b)
	}
	for _, o := range []string{
		hookproto.DeriveToolUseID("t", "read_file", json.RawMessage(`{"file_path":"a"}`)),
		hookproto.DeriveToolUseID("s", "write_file", json.RawMessage(`{"file_path":"a"}`)),
		hookproto.DeriveToolUseID("s", "read_file", json.RawMessage(`{"file_path":"b"}`)),
		hookproto.DeriveToolUseID("s", "read_fil", json.RawMessage(`e{"file_path":"a"}`)),
	} {
		if o == a {
			t.Errorf("different calls share the id %s", a)
		}
	}
	if len(a) != len("gemini-")+32 {
		t.Errorf("id %q", a)
	}
}
