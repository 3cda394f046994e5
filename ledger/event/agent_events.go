package event

import (
	"errors"
	"fmt"
)

// Types of the agent area: lifecycle, the sandbox canary and one type per
// AgentEvent received.
const (
	TypeAgentSpawned     = "agent.spawned"
	TypeAgentExited      = "agent.exited"
	TypeAgentCrashed     = "agent.crashed"
	TypeSandboxCanary    = "sandbox.canary"
	TypeAgentReady       = "agent.ready"
	TypeAgentTokens      = "agent.tokens"
	TypeAgentToolCall    = "agent.tool_call"
	TypeToolDefsRequest  = "agent.tool_defs_request"
	TypeMemoryFlush      = "agent.memory_flush"
	TypeResponseComplete = "agent.response_complete"
	TypeAgentError       = "agent.error"
)

func init() {
	register(func() Payload { return &AgentSpawned{} })
	register(func() Payload { return &AgentExited{} })
	register(func() Payload { return &AgentCrashed{} })
	register(func() Payload { return &SandboxCanary{} })
	register(func() Payload { return &AgentReady{} })
	register(func() Payload { return &AgentTokens{} })
	register(func() Payload { return &AgentToolCall{} })
	register(func() Payload { return &ToolDefsRequest{} })
	register(func() Payload { return &MemoryFlush{} })
	register(func() Payload { return &ResponseComplete{} })
	register(func() Payload { return &AgentError{} })
}

// SandboxConfig is the sandbox an agent was started under.
type SandboxConfig struct {
	Mechanism   string   `json:"mechanism"` // "landlock" or "none"
	LandlockABI int      `json:"landlock_abi"`
	Seccomp     bool     `json:"seccomp"`
	ReadPaths   []string `json:"read_paths"`
	WritePaths  []string `json:"write_paths"`
	ConnectPort int      `json:"connect_port"` // the only TCP port it may connect to
}

// AgentSpawned is written when the engine starts an agent process.
type AgentSpawned struct {
	AgentID    string        `json:"agent_id"`
	SubAgentID string        `json:"subagent_id,omitempty"`
	PID        int           `json:"pid"`
	Restart    int           `json:"restart"` // 0 for the first start, then counts respawns
	Sandbox    SandboxConfig `json:"sandbox"`
}

func (*AgentSpawned) Type() string { return TypeAgentSpawned }

func (a *AgentSpawned) Validate() error {
	if a.PID <= 0 || a.Restart < 0 {
		return errors.New("pid must be positive and restart not negative")
	}
	return firstErr(need("agent_id", a.AgentID, "sandbox.mechanism", a.Sandbox.Mechanism))
}

// AgentExited is an orderly agent exit (after a shutdown directive).
type AgentExited struct {
	AgentID    string `json:"agent_id"`
	SubAgentID string `json:"subagent_id,omitempty"`
	PID        int    `json:"pid"`
	ExitCode   int    `json:"exit_code"`
	Reason     string `json:"reason"`
}

func (*AgentExited) Type() string { return TypeAgentExited }

func (a *AgentExited) Validate() error { return need("agent_id", a.AgentID, "reason", a.Reason) }

// AgentCrashed is an agent that died unasked, or was killed by the engine
// (for a bad canary, a wrong token, a broken stream).
type AgentCrashed struct {
	AgentID    string `json:"agent_id"`
	SubAgentID string `json:"subagent_id,omitempty"`
	PID        int    `json:"pid"`
	ExitCode   int    `json:"exit_code"`        // -1 when killed by a signal
	Signal     string `json:"signal,omitempty"` // e.g. "killed"
	Detail     string `json:"detail"`
	Stderr     string `json:"stderr,omitempty"` // the tail of its stderr
	Respawn    bool   `json:"respawn"`          // whether the engine starts another
}

func (*AgentCrashed) Type() string { return TypeAgentCrashed }

func (a *AgentCrashed) Validate() error { return need("agent_id", a.AgentID, "detail", a.Detail) }

// Canary statuses (the seed document on canary probes).
const (
	CanarySandboxed   = "sandboxed"
	CanaryPartial     = "partial"
	CanaryUnsandboxed = "unsandboxed"
	CanaryUnavailable = "unavailable"
)

// Probe is one canary probe's result.
type Probe struct {
	Name   string `json:"name"`
	Status string `json:"status"` // blocked, failed or skipped
	Target string `json:"target,omitempty"`
	Error  string `json:"error,omitempty"`
}

// Canary is the agent's full canary result, as it sent it.
type Canary struct {
	Verified  bool    `json:"verified"`
	Status    string  `json:"status"`
	Platform  string  `json:"platform"`
	Mechanism string  `json:"mechanism"`
	Probes    []Probe `json:"probes"`
	Summary   string  `json:"summary"`
	Timestamp string  `json:"timestamp"`
}

// SandboxCanary records an agent's canary result and what the engine did
// about it.
type SandboxCanary struct {
	AgentID    string `json:"agent_id"`
	SubAgentID string `json:"subagent_id,omitempty"`
	Result     Canary `json:"result"`
	Action     string `json:"action"` // accepted, warned (no sandbox here) or killed
	Reason     string `json:"reason,omitempty"`
}

func (*SandboxCanary) Type() string { return TypeSandboxCanary }

func (s *SandboxCanary) Validate() error {
	if err := oneOf("result.status", s.Result.Status, CanarySandboxed, CanaryPartial, CanaryUnsandboxed, CanaryUnavailable); err != nil {
		return err
	}
	for i, p := range s.Result.Probes {
		if err := oneOf(fmt.Sprintf("probes[%d].status", i), p.Status, "blocked", "failed", "skipped"); err != nil {
			return err
		}
	}
	if s.Result.Verified != (s.Result.Status == CanarySandboxed) {
		return errors.New("verified must be true exactly when status is sandboxed")
	}
	if s.Action == "accepted" && s.Result.Status != CanarySandboxed {
		return errors.New("an agent whose canary is not sandboxed cannot be accepted")
	}
	return firstErr(need("agent_id", s.AgentID), oneOf("action", s.Action, "accepted", "warned", "killed"))
}

// AgentReady records the agent's AgentReady. The token is never recorded.
type AgentReady struct {
	AgentID      string `json:"agent_id"`
	SubAgentID   string `json:"subagent_id,omitempty"`
	TokenValid   bool   `json:"token_valid"`
	CanaryStatus string `json:"canary_status"`
}

func (*AgentReady) Type() string { return TypeAgentReady }

func (a *AgentReady) Validate() error { return need("agent_id", a.AgentID) }

// AgentTokens coalesces consecutive LLMTokenEmitted events of one message:
// Text is their tokens concatenated in order, Count how many there were.
type AgentTokens struct {
	SubAgentID string `json:"subagent_id,omitempty"`
	MessageID  string `json:"message_id"`
	Text       string `json:"text"`
	Count      int    `json:"count"`
}

func (*AgentTokens) Type() string { return TypeAgentTokens }

func (a *AgentTokens) Validate() error {
	if a.Count <= 0 {
		return errors.New("count must be positive")
	}
	return need("message_id", a.MessageID)
}

// AgentToolCall records a ToolCallProposed as received, before any parsing.
type AgentToolCall struct {
	SubAgentID string `json:"subagent_id,omitempty"`
	MessageID  string `json:"message_id"`
	CallID     string `json:"call_id"`
	Tool       string `json:"tool"`
	Arguments  string `json:"arguments"` // the JSON text as the agent sent it
}

func (*AgentToolCall) Type() string { return TypeAgentToolCall }

func (a *AgentToolCall) Validate() error { return need("call_id", a.CallID, "tool", a.Tool) }

// ToolDefsRequest records the agent asking for tool groups (load_tools).
type ToolDefsRequest struct {
	SubAgentID string   `json:"subagent_id,omitempty"`
	CallID     string   `json:"call_id"`
	Groups     []string `json:"groups"`
}

func (*ToolDefsRequest) Type() string { return TypeToolDefsRequest }

func (r *ToolDefsRequest) Validate() error { return need("call_id", r.CallID) }

// MemoryFlush records memory the agent asked to keep.
type MemoryFlush struct {
	SubAgentID string `json:"subagent_id,omitempty"`
	Content    string `json:"content,omitempty"`
	Blob       string `json:"blob,omitempty"`
	Size       int64  `json:"size"`
}

func (*MemoryFlush) Type() string { return TypeMemoryFlush }

func (m *MemoryFlush) Validate() error { return inlineOrBlob(m.Content, m.Blob, m.Size) }

// Thought is one step of the agent's reasoning shown to the user.
type Thought struct {
	Stage   string `json:"stage"` // reasoning or tool_call
	Summary string `json:"summary"`
	Detail  string `json:"detail,omitempty"` // JSON text
}

// ResponseComplete records the agent's final answer to a message.
type ResponseComplete struct {
	SubAgentID string    `json:"subagent_id,omitempty"`
	MessageID  string    `json:"message_id"`
	Content    string    `json:"content"`
	Thoughts   []Thought `json:"thoughts"`
	Usage      Usage     `json:"usage"`
}

func (*ResponseComplete) Type() string { return TypeResponseComplete }

func (r *ResponseComplete) Validate() error {
	return firstErr(need("message_id", r.MessageID), r.Usage.validate())
}

// AgentError records an error the agent reported.
type AgentError struct {
	SubAgentID string `json:"subagent_id,omitempty"`
	MessageID  string `json:"message_id,omitempty"`
	Code       string `json:"code"`
	Message    string `json:"message"`
}

func (*AgentError) Type() string { return TypeAgentError }

func (a *AgentError) Validate() error { return need("code", a.Code, "message", a.Message) }
