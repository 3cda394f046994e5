package event

import "errors"

// Types of the sub-agent area: a sub-agent's life, from the parent's call
// that spawned it to the one entry that ends it. A sub-agent's own entries
// (agent.*, llm.*, tool.proposed, shield.verdict, approval.*,
// chronicle.snapshot, exec.*) are in its parent's session and carry its
// subagent_id; subagent.spawned ties that id to the parent's call.
//
// Exactly one of subagent.completed, subagent.failed, subagent.cancelled
// and subagent.timed_out ends each spawned sub-agent; nothing of the
// sub-agent executes after it (verify --strict checks both).
const (
	TypeSubAgentSpawned   = "subagent.spawned"
	TypeSubAgentCompleted = "subagent.completed"
	TypeSubAgentFailed    = "subagent.failed"
	TypeSubAgentCancelled = "subagent.cancelled"
	TypeSubAgentTimedOut  = "subagent.timed_out"
)

func init() {
	register(func() Payload { return &SubAgentSpawned{} })
	register(func() Payload { return &SubAgentCompleted{} })
	register(func() Payload { return &SubAgentFailed{} })
	register(func() Payload { return &SubAgentCancelled{} })
	register(func() Payload { return &SubAgentTimedOut{} })
}

// SubAgentEnded reports whether typ is one of the entries that end a
// sub-agent.
func SubAgentEnded(typ string) bool {
	switch typ {
	case TypeSubAgentCompleted, TypeSubAgentFailed, TypeSubAgentCancelled, TypeSubAgentTimedOut:
		return true
	}
	return false
}

// SubAgentSpawned records a sub-agent the engine decided to start for the
// parent's spawn call (ParentCallID, a call of the session's own agent),
// before its process starts: its task, the tools it was granted and its
// limits. The process itself is agent.spawned with the same subagent_id.
type SubAgentSpawned struct {
	SubAgentID      string `json:"subagent_id"`
	ParentMessageID string `json:"parent_message_id"`
	ParentCallID    string `json:"parent_call_id"`
	// Task is the sub-agent's first message, inline or as a blob.
	Task     string   `json:"task,omitempty"`
	TaskBlob string   `json:"task_blob,omitempty"`
	TaskSize int64    `json:"task_size"`
	Tools    []string `json:"tools"` // the tool names it may propose
	Model    string   `json:"model,omitempty"`
	// Limits in force for it.
	MaxRounds int   `json:"max_rounds"`
	TimeoutMS int64 `json:"timeout_ms"`
}

func (*SubAgentSpawned) Type() string { return TypeSubAgentSpawned }

func (s *SubAgentSpawned) Validate() error {
	if s.MaxRounds <= 0 || s.TimeoutMS <= 0 {
		return errors.New("max_rounds and timeout_ms must be positive")
	}
	if s.Tools == nil {
		return errors.New("tools is required (an empty list grants none)")
	}
	return firstErr(need("subagent_id", s.SubAgentID, "parent_call_id", s.ParentCallID),
		inlineOrBlobNamed("task", s.Task, s.TaskBlob, s.TaskSize))
}

// SubAgentCompleted records a sub-agent's final answer, the result handed
// back to its parent.
type SubAgentCompleted struct {
	SubAgentID string `json:"subagent_id"`
	Result     string `json:"result,omitempty"`
	ResultBlob string `json:"result_blob,omitempty"`
	Size       int64  `json:"size"`
	Rounds     int    `json:"rounds"`     // model calls it made
	ToolCalls  int    `json:"tool_calls"` // calls it proposed
	Usage      Usage  `json:"usage"`
	DurationMS int64  `json:"duration_ms"`
}

func (*SubAgentCompleted) Type() string { return TypeSubAgentCompleted }

func (s *SubAgentCompleted) Validate() error {
	if s.Rounds < 0 || s.ToolCalls < 0 || s.DurationMS < 0 {
		return errors.New("rounds, tool_calls and duration_ms must not be negative")
	}
	return firstErr(need("subagent_id", s.SubAgentID), inlineOrBlobNamed("result", s.Result, s.ResultBlob, s.Size), s.Usage.validate())
}

// Reasons a sub-agent failed.
const (
	SubAgentCrashed       = "crashed"        // its process died unasked
	SubAgentRefused       = "refused"        // its sandbox did not hold, or it never registered
	SubAgentSpawnError    = "spawn_error"    // its process could not be started
	SubAgentMaxRounds     = "max_rounds"     // it used up its model calls
	SubAgentAgentError    = "agent_error"    // it reported an error instead of an answer
	SubAgentEngineStopped = "engine_stopped" // its engine stopped under it
	SubAgentEngineCrashed = "engine_crashed" // recorded at the next start
)

// SubAgentFailed records a sub-agent that ended without an answer.
type SubAgentFailed struct {
	SubAgentID string `json:"subagent_id"`
	Reason     string `json:"reason"`
	Detail     string `json:"detail"`
	DurationMS int64  `json:"duration_ms"`
}

func (*SubAgentFailed) Type() string { return TypeSubAgentFailed }

func (s *SubAgentFailed) Validate() error {
	return firstErr(need("subagent_id", s.SubAgentID, "detail", s.Detail),
		oneOf("reason", s.Reason, SubAgentCrashed, SubAgentRefused, SubAgentSpawnError, SubAgentMaxRounds,
			SubAgentAgentError, SubAgentEngineStopped, SubAgentEngineCrashed))
}

// SubAgentCancelled records a sub-agent stopped on request: by the
// parent's cancel call (ByCallID) or by the engine (a client, a stop).
type SubAgentCancelled struct {
	SubAgentID string `json:"subagent_id"`
	ByCallID   string `json:"by_call_id,omitempty"`
	Reason     string `json:"reason"`
	DurationMS int64  `json:"duration_ms"`
}

func (*SubAgentCancelled) Type() string { return TypeSubAgentCancelled }

func (s *SubAgentCancelled) Validate() error {
	return need("subagent_id", s.SubAgentID, "reason", s.Reason)
}

// SubAgentTimedOut records a sub-agent stopped at its wall-clock limit
// (agents.timeout).
type SubAgentTimedOut struct {
	SubAgentID string `json:"subagent_id"`
	TimeoutMS  int64  `json:"timeout_ms"`
	DurationMS int64  `json:"duration_ms"`
}

func (*SubAgentTimedOut) Type() string { return TypeSubAgentTimedOut }

func (s *SubAgentTimedOut) Validate() error {
	if s.TimeoutMS <= 0 {
		return errors.New("timeout_ms must be positive")
	}
	return need("subagent_id", s.SubAgentID)
}

// inlineOrBlobNamed is inlineOrBlob for members named name, name_blob
// and a size.
func inlineOrBlobNamed(name, content, blob string, size int64) error {
	if err := inlineOrBlob(content, blob, size); err != nil {
		return errors.New(name + ": " + err.Error())
	}
	return nil
}
