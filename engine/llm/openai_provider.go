package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
)

// OpenAIConfig configures an OpenAI-compatible chat completions endpoint.
type OpenAIConfig struct {
	BaseURL string // e.g. https://api.openai.com/v1 or http://localhost:11434/v1
	APIKey  string // may be empty for local servers
	Model   string
	Client  *http.Client
}

// OpenAIProvider speaks the OpenAI chat completions API with streaming.
type OpenAIProvider struct {
	model string
	t     *httpTransport
}

// NewOpenAI returns an OpenAI-compatible provider.
func NewOpenAI(cfg OpenAIConfig) (*OpenAIProvider, error) {
	if cfg.BaseURL == "" || cfg.Model == "" {
		return nil, fmt.Errorf("%w: openai provider needs base_url and model", ErrConfig)
	}
	client := cfg.Client
	if client == nil {
		client = http.DefaultClient
	}
	h := map[string]string{}
	if cfg.APIKey != "" {
		h["Authorization"] = "Bearer " + cfg.APIKey
	}
	return &OpenAIProvider{model: cfg.Model, t: &httpTransport{client: client, url: strings.TrimRight(cfg.BaseURL, "/") + "/chat/completions", headers: h}}, nil
}

// Name implements Provider.
func (p *OpenAIProvider) Name() string { return "openai" }

// Model implements Provider.
func (p *OpenAIProvider) Model() string { return p.model }

// Send implements Provider.
func (p *OpenAIProvider) Send(ctx context.Context, body []byte) (io.ReadCloser, error) {
	return p.t.send(ctx, body)
}

type oaiMessage struct {
	Role       string        `json:"role"`
	Content    *string       `json:"content"`
	ToolCalls  []oaiToolCall `json:"tool_calls,omitempty"`
	ToolCallID string        `json:"tool_call_id,omitempty"`
}

type oaiToolCall struct {
	Index    *int   `json:"index,omitempty"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type oaiTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

type oaiRequest struct {
	Model         string       `json:"model"`
	Messages      []oaiMessage `json:"messages"`
	Tools         []oaiTool    `json:"tools,omitempty"`
	MaxTokens     int64        `json:"max_tokens,omitempty"`
	Stream        bool         `json:"stream"`
	StreamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

// Encode implements Provider.
func (p *OpenAIProvider) Encode(req *Request) ([]byte, error) {
	return encodeOpenAI(req, p.model)
}

func encodeOpenAI(req *Request, defaultModel string) ([]byte, error) {
	r := oaiRequest{Model: req.Model, MaxTokens: req.MaxTokens, Stream: true}
	if r.Model == "" {
		r.Model = defaultModel
	}
	r.StreamOptions.IncludeUsage = true
	for _, m := range req.Messages {
		content := m.Content
		om := oaiMessage{Role: m.Role, Content: &content, ToolCallID: m.ToolCallID}
		if m.Role == RoleAssistant && len(m.ToolCalls) > 0 && content == "" {
			om.Content = nil
		}
		for _, tc := range m.ToolCalls {
			var c oaiToolCall
			c.ID, c.Type = tc.ID, "function"
			c.Function.Name, c.Function.Arguments = tc.Name, tc.Arguments
			om.ToolCalls = append(om.ToolCalls, c)
		}
		r.Messages = append(r.Messages, om)
	}
	for _, t := range req.Tools {
		var ot oaiTool
		ot.Type = "function"
		ot.Function.Name, ot.Function.Description, ot.Function.Parameters = t.Name, t.Description, schemaOrEmpty(t.InputSchema)
		r.Tools = append(r.Tools, ot)
	}
	return json.Marshal(r)
}

func schemaOrEmpty(s json.RawMessage) json.RawMessage {
	if len(s) == 0 {
		return json.RawMessage(`{"type":"object","properties":{}}`)
	}
	return s
}

type oaiChunk struct {
	Model   string `json:"model"`
	Choices []struct {
		Delta struct {
			Content   string        `json:"content"`
			ToolCalls []oaiToolCall `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int64 `json:"prompt_tokens"`
		CompletionTokens int64 `json:"completion_tokens"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// Parse implements Provider: chat completion chunks ending in "data: [DONE]".
// Tool call fragments are joined by index and emitted, in index order,
// once the stream finishes.
func (p *OpenAIProvider) Parse(r io.Reader, fn func(Chunk) error) error { return parseOpenAI(r, fn) }

func parseOpenAI(r io.Reader, fn func(Chunk) error) error {
	calls := map[int]*ToolCall{}
	done := &Done{}
	finished := false
	err := readSSE(r, func(ev sseEvent) (bool, error) {
		if string(ev.data) == "[DONE]" {
			finished = true
			return true, nil
		}
		var c oaiChunk
		if err := json.Unmarshal(ev.data, &c); err != nil {
			return false, fmt.Errorf("%w: chunk is not JSON: %v", ErrMalformed, err)
		}
		if c.Error != nil {
			return false, fmt.Errorf("%w: provider error in stream: %s", ErrMalformed, c.Error.Message)
		}
		if c.Model != "" {
			done.Model = c.Model
		}
		if c.Usage != nil {
			done.Usage = Usage{InputTokens: c.Usage.PromptTokens, OutputTokens: c.Usage.CompletionTokens}
		}
		for _, ch := range c.Choices {
			if ch.Delta.Content != "" {
				if err := fn(Chunk{Text: ch.Delta.Content}); err != nil {
					return false, err
				}
			}
			for _, tc := range ch.Delta.ToolCalls {
				i := 0
				if tc.Index != nil {
					i = *tc.Index
				}
				cur := calls[i]
				if cur == nil {
					cur = &ToolCall{}
					calls[i] = cur
				}
				if tc.ID != "" {
					cur.ID = tc.ID
				}
				cur.Name += tc.Function.Name
				cur.Arguments += tc.Function.Arguments
			}
			if ch.FinishReason != nil && *ch.FinishReason != "" {
				done.FinishReason = *ch.FinishReason
			}
		}
		return false, nil
	})
	if errors.Is(err, io.ErrUnexpectedEOF) || (err == nil && !finished) {
		return fmt.Errorf("%w: no [DONE] marker", ErrTruncated)
	}
	if err != nil {
		return err
	}
	idx := make([]int, 0, len(calls))
	for i := range calls {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	for _, i := range idx {
		tc := calls[i]
		if tc.Name == "" || !json.Valid([]byte(orEmptyObject(tc.Arguments))) {
			return fmt.Errorf("%w: tool call %d incomplete (name %q, arguments %q)", ErrMalformed, i, tc.Name, tc.Arguments)
		}
		tc.Arguments = orEmptyObject(tc.Arguments)
		if tc.ID == "" {
			tc.ID = fmt.Sprintf("call_%d", i) // some local servers send none
		}
		if err := fn(Chunk{ToolCall: tc}); err != nil {
			return err
		}
	}
	return fn(Chunk{Done: done})
}

func orEmptyObject(s string) string {
	if strings.TrimSpace(s) == "" {
		return "{}"
	}
	return s
}
