package event

import (
	"errors"
	"strings"
)

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
// blob. ExitCode is the status of the process a tool ran (execute_command,
// git_*; -1 when it was killed); for a failed tool that ran no process the
// engine records 1, for other tools 0. Outcome says how the call ended.
type ExecCompleted struct {
	SubAgentID string `json:"subagent_id,omitempty"`
	CallID     string `json:"call_id"`
	Tool       string `json:"tool"`
	Result     string `json:"result,omitempty"`
	ResultBlob string `json:"result_blob,omitempty"`
	Size       int64  `json:"size"`
	ExitCode   int    `json:"exit_code"`
	// Failed is true when the tool could not do its work (arguments or a
	// path it refused, a file that is not there, a connection refused, a
	// command that could not be started), as opposed to a process that
	// ran and exited non-zero. Ledgers written before the field existed
	// leave it out; Outcome reads them too.
	Failed     bool        `json:"failed,omitempty"`
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
	// Stopped is true when the engine stopped the execution before it
	// ended by itself: its sub-agent ended (cancelled, timed out, failed,
	// the engine stopping) while it ran, and what it ran was killed.
	Stopped bool `json:"stopped,omitempty"`
	// Interrupted is true for a call opx did not run (an agent's, through
	// its hooks) whose end the agent never reported: the agent was
	// killed, the tool interrupted, the CLI crashed. It was closed at the
	// session's end or the engine's stop or next start, and Post (or Pre
	// and Post) is what the workspace held then, measured from disk.
	Interrupted bool `json:"interrupted,omitempty"`
}

func (*ExecCompleted) Type() string { return TypeExecCompleted }

// Outcome is how the call ended: ExecOK, ExecExited or ExecError (see
// ExecOutcome).
func (e *ExecCompleted) Outcome() string { return ExecOutcome(e.Tool, int64(e.ExitCode), e.Failed) }

// Execution outcomes: the one definition of "failed" that every view of
// the ledger (opx replay, report, metrics, snapshots, snapshot show)
// uses.
const (
	// ExecOK: the tool did what was asked (a process exited 0).
	ExecOK = "completed"
	// ExecExited: a process (execute_command, git_*) ran and exited
	// non-zero or was killed. The tool worked; the command's own result
	// is the news ("ran, exit N"), and it may have changed files.
	ExecExited = "exited"
	// ExecError: the tool failed, it could not do its work: every
	// exec.failed, and every exec.completed that says failed, or that
	// records a non-zero exit for a tool that runs no process (the engine
	// recorded a tool's error that way before the failed field existed).
	ExecError = "failed"
)

// ProcessTool reports whether tool runs a process whose exit status
// exec.completed records: execute_command and the git tools.
func ProcessTool(tool string) bool {
	return tool == "execute_command" || strings.HasPrefix(tool, "git_")
}

// ExecOutcome says how an execution recorded as exec.completed ended, from
// its tool, exit_code and failed fields (an exec.failed is ExecError). It
// needs no more than those three, so folds can read them without decoding
// the payload. In a ledger written before the failed field, a process
// tool that could not start shows as ExecExited: nothing else tells them
// apart there.
func ExecOutcome(tool string, exitCode int64, failed bool) string {
	switch {
	case failed, exitCode != 0 && !ProcessTool(tool):
		return ExecError
	case exitCode != 0:
		return ExecExited
	default:
		return ExecOK
	}
}

func (e *ExecCompleted) Validate() error {
	if e.DurationMS < 0 {
		return errors.New("duration_ms must not be negative")
	}
	if e.Failed && e.ExitCode == 0 {
		return errors.New("a failed execution records a non-zero exit_code")
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
