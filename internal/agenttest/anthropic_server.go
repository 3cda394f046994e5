package agenttest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// NewAnthropic starts a fake of the Anthropic Messages API for Claude
// Code: POST /v1/messages (streamed as SSE: message_start,
// content_block_start/delta/stop, message_delta, message_stop). A request
// that declares tools is a main model call; the others (a title or a
// quota probe) get a short text answer. /v1/messages/count_tokens
// answers a fixed count.
func NewAnthropic(t testing.TB, turns ...Turn) *Server {
	return newServer(t, anthropic{}, turns)
}

type anthropic struct{}

type anthropicRequest struct {
	Stream   bool              `json:"stream"`
	Tools    []json.RawMessage `json:"tools"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

func (anthropic) main(r *http.Request, body []byte) bool {
	if r.URL.Path != "/v1/messages" {
		return false
	}
	var req anthropicRequest
	return json.Unmarshal(body, &req) == nil && len(req.Tools) > 0
}

func (a anthropic) side(w http.ResponseWriter, r *http.Request, body []byte) {
	switch r.URL.Path {
	case "/v1/messages/count_tokens":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"input_tokens":1}`)
	case "/v1/messages":
		a.answer(w, r, body, Answer("ok"), 0)
	default:
		http.NotFound(w, r)
	}
}

func (anthropic) answer(w http.ResponseWriter, r *http.Request, body []byte, t Turn, id int) {
	var req anthropicRequest
	_ = json.Unmarshal(body, &req) // a main call parsed before
	var block map[string]any
	var delta map[string]any
	stop := "end_turn"
	switch {
	case t.Shell != "" || t.Tool != "":
		name, input := t.Tool, t.Input
		if t.Shell != "" {
			name, input = "Bash", map[string]any{"command": t.Shell, "description": "run a command"}
		}
		toolID := fmt.Sprintf("toolu_opx_%d", id)
		block = map[string]any{"type": "tool_use", "id": toolID, "name": name, "input": map[string]any{}}
		delta = map[string]any{"type": "input_json_delta", "partial_json": mustJSON(input)}
		stop = "tool_use"
	default:
		block = map[string]any{"type": "text", "text": ""}
		delta = map[string]any{"type": "text_delta", "text": t.Text}
	}
	msgID := fmt.Sprintf("msg_opx_%d", id)
	usage := map[string]any{"input_tokens": 1, "output_tokens": 1}
	if !req.Stream {
		if block["type"] == "tool_use" {
			var in any
			_ = json.Unmarshal([]byte(delta["partial_json"].(string)), &in)
			block["input"] = in
		} else {
			block["text"] = t.Text
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": msgID, "type": "message", "role": "assistant", "model": "opx-fake",
			"content": []any{block}, "stop_reason": stop, "stop_sequence": nil, "usage": usage,
		})
		return
	}
	sseHeader(w)
	sse(w, "message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": msgID, "type": "message", "role": "assistant", "model": "opx-fake",
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": usage,
	}})
	sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": block})
	sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": delta})
	sse(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	sse(w, "message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 1}})
	sse(w, "message_stop", map[string]any{"type": "message_stop"})
}

// results reads the tool_result blocks of the request's messages.
func (anthropic) results(body []byte) []ToolResult {
	var req anthropicRequest
	if json.Unmarshal(body, &req) != nil {
		return nil
	}
	names := map[string]string{}
	var out []ToolResult
	for _, m := range req.Messages {
		var blocks []struct {
			Type      string          `json:"type"`
			ID        string          `json:"id"`
			Name      string          `json:"name"`
			ToolUseID string          `json:"tool_use_id"`
			Content   json.RawMessage `json:"content"`
			IsError   bool            `json:"is_error"`
		}
		if json.Unmarshal(m.Content, &blocks) != nil {
			continue // a plain string message
		}
		for _, b := range blocks {
			switch b.Type {
			case "tool_use":
				names[b.ID] = b.Name
			case "tool_result":
				out = append(out, ToolResult{ID: b.ToolUseID, Name: names[b.ToolUseID], Output: anthropicText(b.Content), IsError: b.IsError})
			}
		}
	}
	return out
}

// anthropicText flattens a tool_result's content (a string or text blocks).
func anthropicText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}
