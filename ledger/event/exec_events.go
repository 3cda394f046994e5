package event

import "errors"

// Types of the execution area.
const (
	TypeExecStarted   = "exec.started"
	TypeExecCompleted = "exec.completed"
	TypeExecFailed    = "exec.failed"
)

func init() {
	register(func() Payload { return &ExecStarted{} })
	register(func() Payload { return &ExecCompleted{} })
	register(func() Payload { return &ExecFailed{} })
}

// ExecStarted is written, durably, just before an executor runs.
type ExecStarted struct {
	SubAgentID string `json:"subagent_id,omitempty"`
	CallID     string `json:"call_id"`
	Tool       string `json:"tool"`
	ActionHash string `json:"action_hash"` // re-checked against the proposal
}

func (*ExecStarted) Type() string { return TypeExecStarted }

func (e *ExecStarted) Validate() error {
	return firstErr(need("call_id", e.CallID, "tool", e.Tool), needHash("action_hash", e.ActionHash, false))
}

// PostState is a touched path's state after execution: the BLAKE3 of its
// content, or absent. Rollback compares it with the file now to detect a
// conflict.
type PostState struct {
	Path   string `json:"path"`
	Hash   string `json:"hash,omitempty"`
	Absent bool   `json:"absent,omitempty"`
	Mode   uint32 `json:"mode,omitempty"`
}

// ExecCompleted records a tool's result. Output above InlineLimit is a
// blob. ExitCode is a shell command's, 0 for other tools.
type ExecCompleted struct {
	SubAgentID string      `json:"subagent_id,omitempty"`
	CallID     string      `json:"call_id"`
	Tool       string      `json:"tool"`
	Result     string      `json:"result,omitempty"`
	ResultBlob string      `json:"result_blob,omitempty"`
	Size       int64       `json:"size"`
	ExitCode   int         `json:"exit_code"`
	DurationMS int64       `json:"duration_ms"`
	Post       []PostState `json:"post"`
	// Pre is, for a workspace-wide tool (a shell command), the pre-state
	// of each path it changed, from the workspace snapshot taken before
	// it: what a rollback restores. Post then lists the same paths.
	Pre []FileState `json:"pre,omitempty"`
	// DiffError says why a workspace-wide tool's changes could not be
	// worked out (the scan after it failed): Pre and Post are then empty,
	// and a rollback compares the snapshot's manifest with the workspace.
	DiffError string `json:"diff_error,omitempty"`
}

func (*ExecCompleted) Type() string { return TypeExecCompleted }

func (e *ExecCompleted) Validate() error {
	if e.DurationMS < 0 {
		return errors.New("duration_ms must not be negative")
	}
	if err := validatePost(e.Post); err != nil {
		return err
	}
	for _, f := range e.Pre {
		if err := f.validate(); err != nil {
			return err
		}
	}
	return firstErr(need("call_id", e.CallID, "tool", e.Tool), inlineOrBlob(e.Result, e.ResultBlob, e.Size))
}

func validatePost(post []PostState) error {
	for _, p := range post {
		if p.Path == "" || p.Absent == (p.Hash != "") {
			return errors.New("each post path has exactly one of hash and absent")
		}
		if err := needHash("post.hash", p.Hash, true); err != nil {
			return err
		}
	}
	return nil
}

// ExecFailed records an executor that could not do its work (bad path,
// timeout, refused by the workspace) as opposed to a tool that ran and
// reported an error result.
type ExecFailed struct {
	SubAgentID string `json:"subagent_id,omitempty"`
	CallID     string `json:"call_id"`
	Tool       string `json:"tool"`
	Error      string `json:"error"`
	DurationMS int64  `json:"duration_ms"`
}

func (*ExecFailed) Type() string { return TypeExecFailed }

func (e *ExecFailed) Validate() error {
	return need("call_id", e.CallID, "tool", e.Tool, "error", e.Error)
}
