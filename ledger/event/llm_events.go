package event

import "errors"

// Types of the LLM gateway.
const (
	TypeLLMRequest  = "llm.request"
	TypeLLMResponse = "llm.response"
)

func init() {
	register(func() Payload { return &LLMRequest{} })
	register(func() Payload { return &LLMResponse{} })
}

// LLMRequest records a model call as the gateway sent it: the exact request
// body is the blob, so a replay can compare what the agent asked for.
type LLMRequest struct {
	SubAgentID string `json:"subagent_id,omitempty"`
	RequestID  string `json:"request_id"`
	MessageID  string `json:"message_id,omitempty"`
	Provider   string `json:"provider"`
	Model      string `json:"model"`
	Blob       string `json:"blob"` // request body
	Size       int64  `json:"size"`
}

func (*LLMRequest) Type() string { return TypeLLMRequest }

func (r *LLMRequest) Validate() error {
	return firstErr(need("request_id", r.RequestID, "provider", r.Provider, "model", r.Model),
		needBlob("blob", r.Blob, false))
}

// LLMResponse records a model call's outcome: the raw response body as a
// blob (absent when no response arrived), what was parsed from it, and how
// it went.
type LLMResponse struct {
	SubAgentID   string     `json:"subagent_id,omitempty"`
	RequestID    string     `json:"request_id"`
	Provider     string     `json:"provider"`
	Model        string     `json:"model"`
	Blob         string     `json:"blob,omitempty"` // raw response body
	Size         int64      `json:"size"`
	Status       int        `json:"status"`   // HTTP status of the last attempt; 0 if none
	Attempts     int        `json:"attempts"` // including retries
	LatencyMS    int64      `json:"latency_ms"`
	Text         string     `json:"text"`
	ToolCalls    []ToolCall `json:"tool_calls"`
	FinishReason string     `json:"finish_reason,omitempty"`
	Usage        Usage      `json:"usage"`
	Error        string     `json:"error,omitempty"`
}

func (*LLMResponse) Type() string { return TypeLLMResponse }

func (r *LLMResponse) Validate() error {
	if r.Attempts < 1 || r.LatencyMS < 0 {
		return errors.New("attempts must be at least 1 and latency_ms not negative")
	}
	if r.Blob == "" && r.Error == "" {
		return errors.New("a response without a body must say its error")
	}
	for _, c := range r.ToolCalls {
		if err := c.validate(); err != nil {
			return err
		}
	}
	return firstErr(need("request_id", r.RequestID, "provider", r.Provider, "model", r.Model),
		needBlob("blob", r.Blob, true), r.Usage.validate())
}
