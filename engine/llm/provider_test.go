package llm_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/opx-dev/opx/engine/llm"
)

// openAIStream is a chat completions stream in the shape OpenAI sends:
// text deltas, a tool call split across chunks, finish, usage, [DONE].
const openAIStream = `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"content":"Let me "},"finish_reason":null}]}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"content":"look."},"finish_reason":null}]}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_abc","type":"function","function":{"name":"read_file","arguments":""}}]},"finish_reason":null}]}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\":"}}]},"finish_reason":null}]}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":" \"go.mod\"}"}}]},"finish_reason":null}]}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","model":"gpt-4o-2024-08-06","choices":[],"usage":{"prompt_tokens":120,"completion_tokens":17,"total_tokens":137}}

data: [DONE]

`

// anthropicStream is a Messages stream in the shape Anthropic sends.
const anthropicStream = `event: message_start
data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"usage":{"input_tokens":95,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

event: ping
data: {"type": "ping"}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Let me "}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"look."}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: content_block_start
data: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_01","name":"read_file","input":{}}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"path\": "}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"\"go.mod\"}"}}

event: content_block_stop
data: {"type":"content_block_stop","index":1}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":23}}

event: message_stop
data: {"type":"message_stop"}

`

type reply struct {
	status     int
	retryAfter string
	body       string
	hang       bool
}

// server answers successive requests with the given replies and keeps
// the request bodies it saw.
func server(t *testing.T, replies ...reply) (*httptest.Server, *[]string) {
	t.Helper()
	var seen []string
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := make([]byte, r.ContentLength)
		r.Body.Read(b)
		seen = append(seen, string(b))
		rep := replies[min(n, len(replies)-1)]
		n++
		if rep.retryAfter != "" {
			w.Header().Set("Retry-After", rep.retryAfter)
		}
		if rep.status == 0 {
			rep.status = 200
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(rep.status)
		w.Write([]byte(rep.body))
		if rep.hang {
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &seen
}

func newOpenAI(t *testing.T, url string) llm.Provider {
	p, err := llm.NewOpenAI(llm.OpenAIConfig{BaseURL: url, Model: "gpt-4o", APIKey: "sk-test"})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func newAnthropic(t *testing.T, url string) llm.Provider {
	p, err := llm.NewAnthropic(llm.AnthropicConfig{BaseURL: url, Model: "claude-sonnet-4-5", APIKey: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func request() *llm.Request {
	return &llm.Request{Messages: []llm.Message{
		{Role: llm.RoleSystem, Content: "You are careful."},
		{Role: llm.RoleUser, Content: "What module is this?"},
	}, Tools: []llm.Tool{{Name: "read_file", Description: "Read a file", InputSchema: []byte(`{"type":"object","properties":{"path":{"type":"string"}}}`)}}}
}

// noSleep records waits instead of sleeping.
func noSleep(waits *[]time.Duration) func(context.Context, time.Duration) error {
	return func(_ context.Context, d time.Duration) error {
		*waits = append(*waits, d)
		return nil
	}
}

func collect(t *testing.T, p llm.Provider, policy llm.RetryPolicy) (*llm.Exchange, []llm.Chunk, error) {
	t.Helper()
	var chunks []llm.Chunk
	x, err := llm.Complete(context.Background(), p, request(), policy, func(c llm.Chunk) error {
		chunks = append(chunks, c)
		return nil
	})
	return x, chunks, err
}

func TestComplete_Streams(t *testing.T) {
	for _, tc := range []struct {
		name   string
		stream string
		mk     func(*testing.T, string) llm.Provider
		usage  llm.Usage
		model  string
	}{
		{"openai", openAIStream, newOpenAI, llm.Usage{InputTokens: 120, OutputTokens: 17}, "gpt-4o-2024-08-06"},
		{"anthropic", anthropicStream, newAnthropic, llm.Usage{InputTokens: 95, OutputTokens: 23}, "claude-sonnet-4-5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, seen := server(t, reply{body: tc.stream})
			p := tc.mk(t, srv.URL)
			x, chunks, err := collect(t, p, llm.RetryPolicy{})
			if err != nil {
				t.Fatal(err)
			}
			if x.Text != "Let me look." {
				t.Errorf("text = %q", x.Text)
			}
			if len(x.ToolCalls) != 1 || x.ToolCalls[0].Name != "read_file" || x.ToolCalls[0].Arguments != `{"path": "go.mod"}` {
				t.Errorf("tool calls = %+v", x.ToolCalls)
			}
			if x.Done == nil || x.Done.Usage != tc.usage || x.Done.Model != tc.model {
				t.Errorf("done = %+v", x.Done)
			}
			if last := chunks[len(chunks)-1]; last.Done == nil {
				t.Errorf("last chunk is not Done: %+v", last)
			}
			if string(x.ResponseBody) != tc.stream {
				t.Errorf("raw response not recorded verbatim")
			}
			if len(*seen) != 1 || (*seen)[0] != string(x.RequestBody) {
				t.Errorf("request body sent differs from the one recorded")
			}
			// Replay: parsing the recorded bytes gives the same chunks.
			var again []llm.Chunk
			if err := p.Parse(strings.NewReader(string(x.ResponseBody)), func(c llm.Chunk) error { again = append(again, c); return nil }); err != nil {
				t.Fatal(err)
			}
			if len(again) != len(chunks) {
				t.Fatalf("replay gave %d chunks, live %d", len(again), len(chunks))
			}
		})
	}
}

func TestComplete_RetryAfter429(t *testing.T) {
	srv, seen := server(t, reply{status: 429, retryAfter: "7", body: `{"error":{"message":"rate limited"}}`}, reply{status: 503, body: "overloaded"}, reply{body: openAIStream})
	var waits []time.Duration
	x, _, err := collect(t, newOpenAI(t, srv.URL), llm.RetryPolicy{Sleep: noSleep(&waits), BaseDelay: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if len(*seen) != 3 || len(x.Attempts) != 3 {
		t.Fatalf("requests %d, attempts %+v", len(*seen), x.Attempts)
	}
	if x.Attempts[0].Status != 429 || x.Attempts[0].RetryAfter != 7*time.Second || waits[0] != 7*time.Second {
		t.Errorf("429 attempt %+v, waits %v", x.Attempts[0], waits)
	}
	if x.Attempts[1].Status != 503 || waits[1] != 2*time.Second {
		t.Errorf("503 attempt %+v, waits %v (want exponential backoff)", x.Attempts[1], waits)
	}
}

func TestComplete_Failures(t *testing.T) {
	for _, tc := range []struct {
		name    string
		replies []reply
		want    error
		tries   int
	}{
		{"client error not retried", []reply{{status: 400, body: "bad request"}}, nil, 1},
		{"server errors give up", []reply{{status: 500}, {status: 502}, {status: 500}, {status: 500}}, nil, 4},
		{"malformed chunk", []reply{{body: "data: {not json\n\n"}}, llm.ErrMalformed, 1},
		{"truncated stream", []reply{{body: strings.SplitAfter(openAIStream, "\n\n")[2]}}, llm.ErrTruncated, 1},
		{"error event", []reply{{body: "data: {\"error\":{\"message\":\"boom\"}}\n\n"}}, llm.ErrMalformed, 1},
		{"incomplete tool call", []reply{{body: "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c\",\"function\":{\"name\":\"x\",\"arguments\":\"{\\\"a\\\"\"}}]}}]}\n\ndata: [DONE]\n\n"}}, llm.ErrMalformed, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, seen := server(t, tc.replies...)
			var waits []time.Duration
			x, _, err := collect(t, newOpenAI(t, srv.URL), llm.RetryPolicy{Sleep: noSleep(&waits)})
			if err == nil {
				t.Fatal("want an error")
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
			if len(*seen) != tc.tries || len(x.Attempts) != tc.tries {
				t.Errorf("tries = %d (attempts %d), want %d", len(*seen), len(x.Attempts), tc.tries)
			}
			if x.RequestBody == nil || x.Attempts[len(x.Attempts)-1].Error == "" {
				t.Errorf("failure not recorded in the exchange: %+v", x.Attempts)
			}
		})
	}
}

func TestComplete_Timeout(t *testing.T) {
	srv, _ := server(t, reply{body: strings.SplitAfter(openAIStream, "\n\n")[1], hang: true})
	x, chunks, err := collect(t, newOpenAI(t, srv.URL), llm.RetryPolicy{CallTimeout: 200 * time.Millisecond})
	if !errors.Is(err, llm.ErrTruncated) {
		t.Fatalf("err = %v, want ErrTruncated", err)
	}
	// Chunks reached the agent before the stall, so no retry.
	if len(chunks) == 0 || len(x.Attempts) != 1 {
		t.Errorf("chunks %d attempts %d", len(chunks), len(x.Attempts))
	}
}

func TestAnthropic_EncodeMergesToolResults(t *testing.T) {
	p := newAnthropic(t, "http://unused")
	body, err := p.Encode(&llm.Request{Messages: []llm.Message{
		{Role: llm.RoleSystem, Content: "sys"},
		{Role: llm.RoleUser, Content: "hi"},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "t1", Name: "read_file", Arguments: `{"path":"a"}`}, {ID: "t2", Name: "read_file", Arguments: `{"path":"b"}`}}},
		{Role: llm.RoleTool, ToolCallID: "t1", Content: "A"},
		{Role: llm.RoleTool, ToolCallID: "t2", Content: "B"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := `"system":"sys","messages":[{"role":"user","content":[{"type":"text","text":"hi"}]},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"read_file","input":{"path":"a"}},{"type":"tool_use","id":"t2","name":"read_file","input":{"path":"b"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"A"},{"type":"tool_result","tool_use_id":"t2","content":"B"}]}]`
	if !strings.Contains(string(body), want) {
		t.Errorf("body = %s", body)
	}
}

func loadDefault(t *testing.T) *llm.ScriptedProvider {
	t.Helper()
	b, err := os.ReadFile("../../fixtures/transcripts/default.json")
	if err != nil {
		t.Fatal(err)
	}
	tr, err := llm.ParseTranscript(b)
	if err != nil {
		t.Fatal(err)
	}
	return llm.NewScripted(tr)
}

func TestScripted_DefaultTranscriptAnswersAnything(t *testing.T) {
	p := loadDefault(t)
	for _, msg := range []string{"anything at all", "please read README.md", "list the files", "¿qué tal? 🙂"} {
		t.Run(msg, func(t *testing.T) {
			req := &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: msg}}}
			x, err := llm.Complete(context.Background(), p, req, llm.RetryPolicy{}, func(llm.Chunk) error { return nil })
			if err != nil {
				t.Fatal(err)
			}
			if len(x.ToolCalls) != 1 {
				t.Fatalf("step 0 should call one tool, got %+v", x.ToolCalls)
			}
			tc := x.ToolCalls[0]
			req.Messages = append(req.Messages,
				llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{tc}},
				llm.Message{Role: llm.RoleTool, ToolCallID: tc.ID, Content: "README.md\ngo.mod\nmain.go\n"})
			x2, err := llm.Complete(context.Background(), p, req, llm.RetryPolicy{}, func(llm.Chunk) error { return nil })
			if err != nil {
				t.Fatal(err)
			}
			if x2.Text == "" || len(x2.ToolCalls) != 0 || x2.Done.FinishReason != "stop" {
				t.Errorf("step 1: text %q calls %+v done %+v", x2.Text, x2.ToolCalls, x2.Done)
			}
			// Deterministic: the same request gives the same bytes.
			x3, _ := llm.Complete(context.Background(), p, req, llm.RetryPolicy{}, func(llm.Chunk) error { return nil })
			if string(x3.ResponseBody) != string(x2.ResponseBody) {
				t.Error("scripted model is not deterministic")
			}
		})
	}
}

func TestScripted_ReadFileArgumentFromMessage(t *testing.T) {
	p := loadDefault(t)
	req := &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: `please read "docs/intro.md" for me`}}}
	x, err := llm.Complete(context.Background(), p, req, llm.RetryPolicy{}, func(llm.Chunk) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if len(x.ToolCalls) != 1 || x.ToolCalls[0].Name != "read_file" || x.ToolCalls[0].Arguments != `{"path": "docs/intro.md"}` {
		t.Errorf("calls = %+v", x.ToolCalls)
	}
}

func TestParseTranscript_Bad(t *testing.T) {
	for _, bad := range []string{
		`{}`,
		`{"model":"m","turns":[]}`,
		`{"model":"m","turns":[{"match":"(","steps":[{"text":"x"}]}]}`,
		`{"model":"m","turns":[{"match":"","steps":[{}]}]}`,
		`{"model":"m","turns":[{"match":"","steps":[{"text":"{{.Nope"}]}]}`,
		`{"model":"m","turns":[{"match":"","steps":[{"tool_calls":[{"arguments":"{}"}]}]}]}`,
		`{"model":"m","unknown":1,"turns":[{"match":"","steps":[{"text":"x"}]}]}`,
	} {
		if _, err := llm.ParseTranscript([]byte(bad)); !errors.Is(err, llm.ErrConfig) {
			t.Errorf("%s: err = %v, want ErrConfig", bad, err)
		}
	}
}
