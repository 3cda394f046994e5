package agenttest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// NewOpenAI starts a fake of the OpenAI Responses API for Codex CLI:
// POST /v1/responses streamed as SSE (response.created,
// response.output_item.added/done, response.output_text.delta,
// response.completed). Every POST /v1/responses is a main model call.
// A Call turn naming a tool the request declares as "custom" (freeform,
// as Codex may declare apply_patch) is sent as a custom_tool_call whose
// input is Input["input"]; any other as a function_call.
func NewOpenAI(t testing.TB, turns ...Turn) *Server {
	return newServer(t, openai{}, turns)
}

type openai struct{}

type openaiRequest struct {
	Tools []struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"tools"`
	Input []json.RawMessage `json:"input"`
}

func (openai) main(r *http.Request, _ []byte) bool { return r.URL.Path == "/v1/responses" }

func (openai) side(w http.ResponseWriter, r *http.Request, _ []byte) {
	if r.URL.Path == "/v1/models" {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"object":"list","data":[]}`)
		return
	}
	http.NotFound(w, r)
}

func (openai) answer(w http.ResponseWriter, r *http.Request, body []byte, t Turn, id int) {
	var req openaiRequest
	_ = json.Unmarshal(body, &req)
	respID := fmt.Sprintf("resp_opx_%d", id)
	var item map[string]any
	var textDelta string
	switch {
	case t.Shell != "":
		item = map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_opx_%d", id), "call_id": fmt.Sprintf("call_opx_%d", id),
			"name": "exec_command", "arguments": mustJSON(map[string]any{"cmd": t.Shell}), "status": "completed"}
	case t.Tool != "":
		custom := false
		for _, d := range req.Tools {
			custom = custom || (d.Name == t.Tool && d.Type == "custom")
		}
		if custom {
			in, _ := t.Input["input"].(string)
			item = map[string]any{"type": "custom_tool_call", "id": fmt.Sprintf("ctc_opx_%d", id), "call_id": fmt.Sprintf("call_opx_%d", id),
				"name": t.Tool, "input": in, "status": "completed"}
		} else {
			item = map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_opx_%d", id), "call_id": fmt.Sprintf("call_opx_%d", id),
				"name": t.Tool, "arguments": mustJSON(t.Input), "status": "completed"}
		}
	default:
		textDelta = t.Text
		item = map[string]any{"type": "message", "id": fmt.Sprintf("msg_opx_%d", id), "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": t.Text, "annotations": []any{}}}}
	}
	resp := func(status string, output []any) map[string]any {
		return map[string]any{"id": respID, "object": "response", "status": status, "model": "opx-fake", "output": output,
			"usage": map[string]any{"input_tokens": 1, "input_tokens_details": map[string]any{"cached_tokens": 0},
				"output_tokens": 1, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 2}}
	}
	sseHeader(w)
	sse(w, "response.created", map[string]any{"type": "response.created", "response": resp("in_progress", []any{})})
	added := map[string]any{}
	for k, v := range item {
		added[k] = v
	}
	added["status"] = "in_progress"
	sse(w, "response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": 0, "item": added})
	if textDelta != "" {
		sse(w, "response.output_text.delta", map[string]any{"type": "response.output_text.delta", "item_id": item["id"],
			"output_index": 0, "content_index": 0, "delta": textDelta})
	}
	sse(w, "response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
	sse(w, "response.completed", map[string]any{"type": "response.completed", "response": resp("completed", []any{item})})
}

// results reads the function_call_output and custom_tool_call_output
// items of the request's input.
func (openai) results(body []byte) []ToolResult {
	var req openaiRequest
	if json.Unmarshal(body, &req) != nil {
		return nil
	}
	names := map[string]string{}
	var out []ToolResult
	for _, raw := range req.Input {
		var it struct {
			Type   string          `json:"type"`
			CallID string          `json:"call_id"`
			Name   string          `json:"name"`
			Output json.RawMessage `json:"output"`
		}
		if json.Unmarshal(raw, &it) != nil {
			continue
		}
		switch it.Type {
		case "function_call", "custom_tool_call":
			names[it.CallID] = it.Name
		case "function_call_output", "custom_tool_call_output":
			out = append(out, ToolResult{ID: it.CallID, Name: names[it.CallID], Output: openaiText(it.Output)})
		}
	}
	return out
}

// openaiText flattens an output (a string or content items with text).
func openaiText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.Text)
		}
		return b.String()
	}
	return string(raw)
}
