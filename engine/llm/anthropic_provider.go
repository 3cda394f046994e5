package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// AnthropicConfig configures the Anthropic Messages API.
type AnthropicConfig struct {
	BaseURL   string // default https://api.anthropic.com/v1
	APIKey    string
	Model     string
	MaxTokens int64 // default 4096; the API requires one
	Client    *http.Client
}

// AnthropicProvider speaks the Anthropic Messages API with streaming.
type AnthropicProvider struct {
	model     string
	maxTokens int64
	t         *httpTransport
}

// anthropicVersion is the API version header the encoder targets.
const anthropicVersion = "2023-06-01"

// NewAnthropic returns an Anthropic Messages provider.
func NewAnthropic(cfg AnthropicConfig) (*AnthropicProvider, error) {
	if cfg.Model == "" || cfg.APIKey == "" {
		return nil, fmt.Errorf("%w: anthropic provider needs model and api key", ErrConfig)
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = "https://api.anthropic.com/v1"
	}
	if cfg.MaxTokens <= 0 {
		cfg.MaxTokens = 4096
	}
	client := cfg.Client
	if client == nil {
		client = http.DefaultClient
	}
	return &AnthropicProvider{model: cfg.Model, maxTokens: cfg.MaxTokens, t: &httpTransport{
		client: client, url: strings.TrimRight(cfg.BaseURL, "/") + "/messages",
		headers: map[string]string{"x-api-key": cfg.APIKey, "anthropic-version": anthropicVersion},
	}}, nil
}

// Name implements Provider.
func (p *AnthropicProvider) Name() string { return "anthropic" }

// Model implements Provider.
func (p *AnthropicProvider) Model() string { return p.model }

// Send implements Provider.
func (p *AnthropicProvider) Send(ctx context.Context, body []byte) (io.ReadCloser, error) {
	return p.t.send(ctx, body)
}

type antBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   string          `json:"content,omitempty"`
}

type antMessage struct {
	Role    string     `json:"role"`
	Content []antBlock `json:"content"`
}

type antTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

type antRequest struct {
	Model     string       `json:"model"`
	System    string       `json:"system,omitempty"`
	Messages  []antMessage `json:"messages"`
	Tools     []antTool    `json:"tools,omitempty"`
	MaxTokens int64        `json:"max_tokens"`
	Stream    bool         `json:"stream"`
}

// Encode implements Provider. System messages become the system field;
// tool results become user messages with tool_result blocks, merged with
// a neighbouring user message as the API requires alternating roles.
func (p *AnthropicProvider) Encode(req *Request) ([]byte, error) {
	r := antRequest{Model: req.Model, MaxTokens: req.MaxTokens, Stream: true}
	if r.Model == "" {
		r.Model = p.model
	}
	if r.MaxTokens <= 0 {
		r.MaxTokens = p.maxTokens
	}
	var system []string
	for _, m := range req.Messages {
		var role string
		var blocks []antBlock
		switch m.Role {
		case RoleSystem:
			system = append(system, m.Content)
			continue
		case RoleUser:
			role, blocks = "user", []antBlock{{Type: "text", Text: m.Content}}
		case RoleTool:
			role, blocks = "user", []antBlock{{Type: "tool_result", ToolUseID: m.ToolCallID, Content: m.Content}}
		case RoleAssistant:
			role = "assistant"
			if m.Content != "" {
				blocks = append(blocks, antBlock{Type: "text", Text: m.Content})
			}
			for _, tc := range m.ToolCalls {
				in := json.RawMessage(orEmptyObject(tc.Arguments))
				if !json.Valid(in) {
					return nil, fmt.Errorf("tool call %s: arguments are not JSON", tc.ID)
				}
				blocks = append(blocks, antBlock{Type: "tool_use", ID: tc.ID, Name: tc.Name, Input: in})
			}
		default:
			return nil, fmt.Errorf("unknown role %q", m.Role)
		}
		if n := len(r.Messages); n > 0 && r.Messages[n-1].Role == role {
			r.Messages[n-1].Content = append(r.Messages[n-1].Content, blocks...)
			continue
		}
		r.Messages = append(r.Messages, antMessage{Role: role, Content: blocks})
	}
	r.System = strings.Join(system, "\n\n")
	for _, t := range req.Tools {
		r.Tools = append(r.Tools, antTool{Name: t.Name, Description: t.Description, InputSchema: schemaOrEmpty(t.InputSchema)})
	}
	return json.Marshal(r)
}

type antEvent struct {
	Type    string `json:"type"`
	Index   int    `json:"index"`
	Message *struct {
		Model string `json:"model"`
		Usage struct {
			InputTokens int64 `json:"input_tokens"`
		} `json:"usage"`
	} `json:"message"`
	ContentBlock *antBlock `json:"content_block"`
	Delta        *struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage *struct {
		OutputTokens int64 `json:"output_tokens"`
	} `json:"usage"`
	Error *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

// Parse implements Provider: message_start ... message_stop. A tool_use
// block is emitted at its content_block_stop with its joined input.
func (p *AnthropicProvider) Parse(r io.Reader, fn func(Chunk) error) error {
	done := &Done{}
	open := map[int]*ToolCall{}
	finished := false
	err := readSSE(r, func(ev sseEvent) (bool, error) {
		var e antEvent
		if err := json.Unmarshal(ev.data, &e); err != nil {
			return false, fmt.Errorf("%w: event is not JSON: %v", ErrMalformed, err)
		}
		switch e.Type {
		case "ping":
		case "error":
			msg := "unknown"
			if e.Error != nil {
				msg = e.Error.Type + ": " + e.Error.Message
			}
			return false, fmt.Errorf("%w: provider error in stream: %s", ErrMalformed, msg)
		case "message_start":
			if e.Message != nil {
				done.Model = e.Message.Model
				done.Usage.InputTokens = e.Message.Usage.InputTokens
			}
		case "content_block_start":
			if e.ContentBlock != nil && e.ContentBlock.Type == "tool_use" {
				open[e.Index] = &ToolCall{ID: e.ContentBlock.ID, Name: e.ContentBlock.Name}
			}
		case "content_block_delta":
			if e.Delta == nil {
				return false, fmt.Errorf("%w: delta without body", ErrMalformed)
			}
			switch e.Delta.Type {
			case "text_delta":
				if err := fn(Chunk{Text: e.Delta.Text}); err != nil {
					return false, err
				}
			case "input_json_delta":
				tc := open[e.Index]
				if tc == nil {
					return false, fmt.Errorf("%w: input delta for unknown block %d", ErrMalformed, e.Index)
				}
				tc.Arguments += e.Delta.PartialJSON
			}
		case "content_block_stop":
			if tc := open[e.Index]; tc != nil {
				delete(open, e.Index)
				tc.Arguments = orEmptyObject(tc.Arguments)
				if !json.Valid([]byte(tc.Arguments)) {
					return false, fmt.Errorf("%w: tool_use %s input is not JSON", ErrMalformed, tc.ID)
				}
				if err := fn(Chunk{ToolCall: tc}); err != nil {
					return false, err
				}
			}
		case "message_delta":
			if e.Delta != nil && e.Delta.StopReason != "" {
				done.FinishReason = e.Delta.StopReason
			}
			if e.Usage != nil {
				done.Usage.OutputTokens = e.Usage.OutputTokens
			}
		case "message_stop":
			finished = true
			return true, nil
		}
		return false, nil
	})
	if errors.Is(err, io.ErrUnexpectedEOF) || (err == nil && !finished) {
		return fmt.Errorf("%w: no message_stop event", ErrTruncated)
	}
	if err != nil {
		return err
	}
	if len(open) > 0 {
		return fmt.Errorf("%w: %d tool_use block(s) never closed", ErrTruncated, len(open))
	}
	return fn(Chunk{Done: done})
}
