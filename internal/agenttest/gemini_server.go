package agenttest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// NewGemini starts a fake of the Gemini API for Gemini CLI:
// POST /v1beta/models/MODEL:streamGenerateContent?alt=sse (SSE lines
// "data: {candidates:[...]}") for main model calls (those that declare
// tools), and MODEL:generateContent for the CLI's utility calls (the
// router's complexity score, the next-speaker and loop checks), answered
// with one JSON object that satisfies each of their schemas and lets the
// user speak next. MODEL:countTokens answers a fixed count.
func NewGemini(t testing.TB, turns ...Turn) *Server {
	return newServer(t, gemini{}, turns)
}

type gemini struct{}

type geminiRequest struct {
	Tools    []json.RawMessage `json:"tools"`
	Contents []struct {
		Role  string `json:"role"`
		Parts []struct {
			FunctionCall *struct {
				ID   string `json:"id"`
				Name string `json:"name"`
			} `json:"functionCall"`
			FunctionResponse *struct {
				ID       string          `json:"id"`
				Name     string          `json:"name"`
				Response json.RawMessage `json:"response"`
			} `json:"functionResponse"`
		} `json:"parts"`
	} `json:"contents"`
}

// geminiUtility answers every utility call's schema at once.
const geminiUtility = `{"complexity_reasoning":"scripted","complexity_score":10,` +
	`"reasoning":"scripted","next_speaker":"user",` +
	`"unproductive_state_analysis":"none","unproductive_state_confidence":0}`

func (gemini) main(r *http.Request, body []byte) bool {
	if !strings.HasSuffix(r.URL.Path, ":streamGenerateContent") {
		return false
	}
	var req geminiRequest
	return json.Unmarshal(body, &req) == nil && len(req.Tools) > 0
}

func (g gemini) side(w http.ResponseWriter, r *http.Request, body []byte) {
	switch {
	case strings.HasSuffix(r.URL.Path, ":countTokens"):
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"totalTokens":1}`)
	case strings.HasSuffix(r.URL.Path, ":generateContent"):
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(geminiResponse(map[string]any{"text": geminiUtility}))
	case strings.HasSuffix(r.URL.Path, ":streamGenerateContent"):
		g.answer(w, r, body, Answer("ok"), 0)
	default:
		http.NotFound(w, r)
	}
}

func geminiResponse(part map[string]any) map[string]any {
	return map[string]any{
		"candidates": []any{map[string]any{"index": 0, "finishReason": "STOP",
			"content": map[string]any{"role": "model", "parts": []any{part}}}},
		"usageMetadata": map[string]any{"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
		"modelVersion":  "opx-fake",
	}
}

func (gemini) answer(w http.ResponseWriter, r *http.Request, body []byte, t Turn, id int) {
	var part map[string]any
	switch {
	case t.Shell != "":
		part = map[string]any{"functionCall": map[string]any{"id": fmt.Sprintf("call_opx_%d", id), "name": "run_shell_command",
			"args": map[string]any{"command": t.Shell, "description": "run a command"}}}
	case t.Tool != "":
		part = map[string]any{"functionCall": map[string]any{"id": fmt.Sprintf("call_opx_%d", id), "name": t.Tool, "args": t.Input}}
	default:
		part = map[string]any{"text": t.Text}
	}
	sseHeader(w)
	sse(w, "", geminiResponse(part))
}

// results reads the functionResponse parts of the request's contents.
func (gemini) results(body []byte) []ToolResult {
	var req geminiRequest
	if json.Unmarshal(body, &req) != nil {
		return nil
	}
	var out []ToolResult
	for _, c := range req.Contents {
		for _, p := range c.Parts {
			if fr := p.FunctionResponse; fr != nil {
				out = append(out, ToolResult{ID: fr.ID, Name: fr.Name, Output: string(fr.Response),
					IsError: strings.Contains(string(fr.Response), `"error"`)})
			}
		}
	}
	return out
}
