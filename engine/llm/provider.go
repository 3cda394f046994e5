package llm

import (
	"context"
	"encoding/json"
	"io"
)

// Role names who said a message.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Request is one model call, independent of the provider.
type Request struct {
	Model     string    `json:"model"`
	Messages  []Message `json:"messages"`
	Tools     []Tool    `json:"tools,omitempty"`
	MaxTokens int64     `json:"max_tokens,omitempty"`
}

// Message is one message of the conversation sent to the model.
type Message struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`   // assistant
	ToolCallID string     `json:"tool_call_id,omitempty"` // tool
}

// Tool describes a tool the model may call.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// ToolCall is a call the model made.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"` // JSON object text
}

// Usage counts tokens.
type Usage struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
}

// Chunk is one piece of a streamed answer: exactly one field is set.
// Text arrives in pieces; a ToolCall only once complete; Done last.
type Chunk struct {
	Text     string
	ToolCall *ToolCall
	Done     *Done
}

// Done ends an answer.
type Done struct {
	FinishReason string
	Usage        Usage
	Model        string
}

// Provider is one model API.
type Provider interface {
	// Name is the provider kind: "openai", "anthropic" or "scripted".
	Name() string
	// Model is the model requests go to when they name none.
	Model() string
	// Encode returns the request body the API expects.
	Encode(req *Request) ([]byte, error)
	// Send posts a body and returns the raw response stream. A non-2xx
	// answer is an *HTTPError.
	Send(ctx context.Context, body []byte) (io.ReadCloser, error)
	// Parse reads a raw response and calls fn for each chunk, in order,
	// ending with exactly one Done. A stream that ends early or does not
	// parse is an error wrapping ErrMalformed or ErrTruncated.
	Parse(r io.Reader, fn func(Chunk) error) error
}
