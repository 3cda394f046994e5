package replay

import (
	"encoding/json"

	"github.com/opx-dev/opx/chronicle"
	"github.com/opx-dev/opx/ledger/event"
)

// Source is the ledger a timeline is read from: the file itself
// (*ledger.Ledger) or a running engine's ledger service. Build uses Range
// only; Changes reads blobs with GetBlob.
type Source = chronicle.Source

// Options tune Build.
type Options struct {
	// At stops the timeline at this seq: the session as of that entry.
	// 0 reads to the head (seq 0 is the genesis, before any session).
	At uint64
}

// Timeline is one session as the ledger recorded it.
type Timeline struct {
	Session       string `json:"session"`
	Title         string `json:"title"`
	Mode          string `json:"mode"`
	ParentSession string `json:"parent_session,omitempty"`
	SubAgentID    string `json:"subagent_id,omitempty"`
	// CreatedSeq is the session.created entry, 0 if none was read.
	CreatedSeq uint64 `json:"created_seq"`
	// FirstSeq..LastSeq is the session's activity span (ledger.note left
	// out); Start and End are those entries' timestamps.
	FirstSeq uint64 `json:"first_seq"`
	LastSeq  uint64 `json:"last_seq"`
	Start    string `json:"start"`
	End      string `json:"end"`
	// At is Options.At when the timeline stops early, else 0.
	At uint64 `json:"at,omitempty"`
	// Engine is the engine run in force when the session began: version,
	// policy and model.
	Engine *EngineRun `json:"engine,omitempty"`
	// Agent is the coding agent of a session audited through its hooks
	// (mode claude-code, codex or gemini-cli), as its first hook.session
	// said; Transcripts the agent's transcripts stored (hook.transcript).
	Agent       *HookAgent    `json:"agent,omitempty"`
	Transcripts []*Transcript `json:"transcripts,omitempty"`
	Turns       []*Turn       `json:"turns"`
	// Events are the session's entries outside any turn, in seq order.
	Events []*Event `json:"events"`
	// Snapshots are the session's snapshots, oldest first (also reachable
	// from their tool calls).
	Snapshots []*Snapshot `json:"snapshots"`
	Totals    Totals      `json:"totals"`
	// OrphanSubAgents are sub-agents whose subagent.spawned names no
	// call of the session's agent that could have spawned them (only
	// possible in a ledger that does not verify); the others are under
	// their spawn call (ToolCall.SubAgent).
	OrphanSubAgents []*SubAgent `json:"orphan_subagents,omitempty"`
	// Problems lists entries of the session that could not be read as
	// their type says (only possible in a ledger that does not verify).
	Problems []string `json:"problems"`

	pruned map[string]uint64 // blob hash -> chronicle.pruned seq
	read   []uint64          // see Read
	subs   []*SubAgent       // in spawn order
}

// Read returns the seqs of the entries the timeline was built from, in
// ascending order: every entry of the session, the engine run in force,
// and the engine-wide, rollback and retention entries that concern it.
// A review that proves these entries proves everything the timeline
// shows (opx replay's checkpoint verification).
func (t *Timeline) Read() []uint64 { return t.read }

// EngineRun is an engine.started entry.
type EngineRun struct {
	Seq uint64 `json:"seq"`
	TS  string `json:"ts"`
	event.EngineStarted
}

// Turn is one user message and everything that answered it, up to
// agent.response_complete or agent.error. A sub-agent's turn starts at its
// engine.process_request (its task, or a later message from its parent)
// and is one of SubAgent.Turns, numbered from 1 per sub-agent.
type Turn struct {
	N          int    `json:"n"` // 1-based
	MessageID  string `json:"message_id"`
	SubAgentID string `json:"subagent_id,omitempty"`
	// Seq is the client.message (or, without one, the process request).
	Seq    uint64 `json:"seq"`
	TS     string `json:"ts"`
	Client string `json:"client,omitempty"`
	// Content is what the user said.
	Content string `json:"content"`
	// Proxied marks the turn of an mcp-proxy session's tools/call: the
	// MCP client (Client) asked the call in Content (its mcp.request is
	// Seq, MessageID its call id), and Response is what it got back (its
	// mcp.response).
	Proxied bool `json:"proxied,omitempty"`
	// Hooked marks the turn of a session audited through an agent's
	// hooks (timeline_hooks.go): Content is the user's prompt as the
	// hook reported it, AgentCalls the agent's tool calls, Response the
	// model's last message as the agent's end-of-turn hook reported it.
	// Unprompted marks such a turn that holds the calls the agent made
	// before opx saw any prompt of it.
	Hooked     bool         `json:"hooked,omitempty"`
	Unprompted bool         `json:"unprompted,omitempty"`
	AgentCalls []*AgentCall `json:"agent_calls,omitempty"`
	// ProcessSeq is the engine.process_request that asked the agent.
	ProcessSeq   uint64       `json:"process_seq,omitempty"`
	History      int          `json:"history"`       // messages of history sent
	ToolsOffered []string     `json:"tools_offered"` // tool names offered
	ModelCalls   []*ModelCall `json:"model_calls"`
	ToolCalls    []*ToolCall  `json:"tool_calls"`
	// Response is the agent's answer; nil when there was none.
	Response *Response    `json:"response,omitempty"`
	Errors   []*AgentErr  `json:"errors"`
	Events   []*Event     `json:"events"`
	Streamed StreamedText `json:"streamed"`
	// Status is "answered", "error" or "open" (no end recorded, or the
	// timeline stops before it).
	Status string `json:"status"`
	// EndSeq is the response or the first agent.error; 0 when open.
	EndSeq     uint64 `json:"end_seq,omitempty"`
	EndTS      string `json:"end_ts,omitempty"`
	DurationMS int64  `json:"duration_ms"`
}

// Turn statuses.
const (
	TurnAnswered = "answered"
	TurnError    = "error"
	TurnOpen     = "open"
)

// StreamedText is the agent.tokens of a turn: how many entries and tokens,
// and, when the turn has no response, the text the agent had streamed.
type StreamedText struct {
	Entries     int    `json:"entries"`
	Tokens      int    `json:"tokens"`
	PartialText string `json:"partial_text,omitempty"`

	text []byte
}

// ModelCall is an llm.request and its llm.response.
type ModelCall struct {
	RequestSeq  uint64 `json:"request_seq"`
	ResponseSeq uint64 `json:"response_seq,omitempty"` // 0: no response recorded
	TS          string `json:"ts"`
	RequestID   string `json:"request_id"`
	SubAgentID  string `json:"subagent_id,omitempty"`
	// Evaluator is true for Shield's tier 2 evaluator, which asks the
	// model about a proposal; false for the agent's own calls.
	Evaluator    bool             `json:"evaluator"`
	Provider     string           `json:"provider"`
	Model        string           `json:"model"`
	RequestBlob  string           `json:"request_blob"`
	RequestSize  int64            `json:"request_size"`
	ResponseBlob string           `json:"response_blob,omitempty"`
	ResponseSize int64            `json:"response_size"`
	Status       int              `json:"status"`
	Attempts     int              `json:"attempts"`
	LatencyMS    int64            `json:"latency_ms"`
	FinishReason string           `json:"finish_reason,omitempty"`
	Usage        event.Usage      `json:"usage"`
	Error        string           `json:"error,omitempty"`
	Text         string           `json:"text"`
	ToolCalls    []event.ToolCall `json:"tool_calls"` // what the model asked for
}

// ToolCall is one tool call: what the agent sent, the proposal the engine
// accepted, every verdict, the approval, the snapshot, the execution and
// the result delivered to the agent.
type ToolCall struct {
	CallID     string `json:"call_id"`
	SubAgentID string `json:"subagent_id,omitempty"`
	Tool       string `json:"tool"`
	// Seq is the tool.proposed entry; 0 when the agent's call was never
	// proposed (the engine refused it as malformed).
	Seq uint64 `json:"seq"`
	TS  string `json:"ts"`
	// Arguments is the proposal's canonical JSON text.
	Arguments  string `json:"arguments"`
	ActionHash string `json:"action_hash"`
	Mutating   bool   `json:"mutating"`
	// AgentSeq is the agent.tool_call, AgentArguments its arguments as
	// the agent sent them.
	AgentSeq       uint64 `json:"agent_seq,omitempty"`
	AgentArguments string `json:"agent_arguments,omitempty"`
	// AskedBy is the llm.response whose tool calls named this call.
	AskedBy  uint64     `json:"asked_by,omitempty"`
	Verdicts []*Verdict `json:"verdicts"`
	Approval *Approval  `json:"approval,omitempty"`
	Snapshot *Snapshot  `json:"snapshot,omitempty"`
	Exec     *Execution `json:"exec,omitempty"`
	// Flagged is Shield's finding in the result of a tool opx does not
	// control (an MCP server's), before the agent saw it.
	Flagged *Flag     `json:"flagged,omitempty"`
	Result  *Delivery `json:"result,omitempty"`
	// Outcome is one of the Outcome constants.
	Outcome string `json:"outcome"`
	// BlockedBy is the verdict that blocked the call (nil if none did; an
	// approval denied leaves it nil and Outcome OutcomeDenied).
	BlockedBy *Verdict `json:"blocked_by,omitempty"`
	// SubAgent is the sub-agent this call of the session's agent
	// spawned, with everything it did.
	SubAgent *SubAgent `json:"subagent,omitempty"`
	// AboutSubAgent is the sub-agent a later agent tool call of the
	// session's agent is about: its "id" argument (agent_status,
	// agent_result, agent_message, cancel_agent).
	AboutSubAgent string `json:"about_subagent,omitempty"`
	// AgentCall is the seq of the agent's call (hook.tool_call) this
	// call is one of the opx calls of; 0 for any other call.
	AgentCall uint64 `json:"agent_call,omitempty"`
}

// Tool call outcomes.
const (
	OutcomeNotProposed = "not-proposed" // the agent sent it; the engine refused to parse it
	OutcomePending     = "pending"      // proposed, no decision yet (or the timeline stops there)
	OutcomeBlocked     = "blocked"      // a verdict blocked it
	OutcomeEscalated   = "escalated"    // waiting for a human
	OutcomeDenied      = "denied"       // a human (or the timeout) said no
	OutcomeAllowed     = "allowed"      // allowed, not executed (yet)
	OutcomeRunning     = "running"      // exec.started, no end recorded
	OutcomeCompleted   = "completed"    // ran and did what was asked (event.ExecOK)
	OutcomeExited      = "exited"       // a command it ran exited non-zero or was killed (event.ExecExited)
	OutcomeFailed      = "failed"       // the tool failed (event.ExecError)
	// OutcomeInterrupted: an agent's call (through its hooks) whose end
	// the agent never reported: closed by opx with what the workspace
	// held then.
	OutcomeInterrupted = "interrupted"
)

// Verdict is a shield.verdict.
type Verdict struct {
	Seq        uint64 `json:"seq"`
	Decision   string `json:"decision"`
	Tier       int    `json:"tier"`
	Rule       string `json:"rule"`
	Reason     string `json:"reason"`
	PolicyHash string `json:"policy_hash"`
}

// Approval is an approval.requested and its approval.resolved.
type Approval struct {
	ApprovalID string `json:"approval_id"`
	// SubAgentID is the sub-agent whose call asked ("" the session's
	// own agent).
	SubAgentID   string `json:"subagent_id,omitempty"`
	RequestedSeq uint64 `json:"requested_seq"`
	Reason       string `json:"reason"`
	TimeoutMS    int64  `json:"timeout_ms"`
	// ResolvedSeq is 0 while unresolved.
	ResolvedSeq   uint64 `json:"resolved_seq,omitempty"`
	Approved      bool   `json:"approved"`
	By            string `json:"by,omitempty"`
	ResolveReason string `json:"resolve_reason,omitempty"`
	// WaitedMS is how long the answer took; 0 while unresolved.
	WaitedMS int64 `json:"waited_ms"`

	requestedTS string
}

// Snapshot is a chronicle.snapshot of the session; its id is Seq.
type Snapshot struct {
	Seq          uint64            `json:"seq"`
	TS           string            `json:"ts"`
	CallID       string            `json:"call_id"`
	Tool         string            `json:"tool"`
	Kind         string            `json:"kind"`
	Files        []event.FileState `json:"files"`
	ManifestBlob string            `json:"manifest_blob,omitempty"`
	Entries      int64             `json:"entries,omitempty"`
	// Paths are what a rollback restores: the files named, or for a
	// workspace snapshot what its command changed (known once it ended).
	Paths []string `json:"paths"`
	// RestoredBy lists the rollbacks that restored it.
	RestoredBy []uint64 `json:"restored_by"`
	// PrunedBy is the chronicle.pruned that removed its content, 0 if none.
	PrunedBy uint64 `json:"pruned_by,omitempty"`
}

// Execution is exec.started and its exec.completed or exec.failed.
type Execution struct {
	StartedSeq uint64 `json:"started_seq"`
	// EndSeq is the completion or failure, 0 while running.
	EndSeq uint64 `json:"end_seq,omitempty"`
	// Status is "running", or how it ended as event.ExecOutcome says:
	// "completed", "exited" (ran, exit N) or "failed".
	Status     string            `json:"status"`
	Result     string            `json:"result,omitempty"`
	ResultBlob string            `json:"result_blob,omitempty"`
	Size       int64             `json:"size"`
	ExitCode   int               `json:"exit_code"`
	DurationMS int64             `json:"duration_ms"`
	Error      string            `json:"error,omitempty"` // exec.failed
	Pre        []event.FileState `json:"pre,omitempty"`
	Post       []event.PostState `json:"post"`
	DiffError  string            `json:"diff_error,omitempty"`
	// Interrupted is exec.completed's: the agent never reported the end
	// of its call (OutcomeInterrupted).
	Interrupted bool `json:"interrupted,omitempty"`
	// Changed are the paths the call changed, sorted: for a files
	// snapshot those whose post-state differs from the snapshot's
	// pre-state, for a workspace snapshot what the diff found; empty for
	// a call without a snapshot or whose changes are not on record.
	Changed []string `json:"changed"`
}

// Flag is a shield.result_flagged: what Shield found in a call's result
// and what opx did about it (annotated: the agent got it behind a
// warning).
type Flag struct {
	Seq    uint64 `json:"seq"`
	Rule   string `json:"rule"`
	Reason string `json:"reason"`
	Action string `json:"action"`
}

// Delivery is the engine.tool_result the agent received.
type Delivery struct {
	Seq     uint64 `json:"seq"`
	Content string `json:"content,omitempty"`
	Blob    string `json:"blob,omitempty"`
	Size    int64  `json:"size"`
	IsError bool   `json:"is_error"`
}

// Response is the agent's agent.response_complete.
type Response struct {
	Seq      uint64          `json:"seq"`
	TS       string          `json:"ts"`
	Content  string          `json:"content"`
	Thoughts []event.Thought `json:"thoughts"`
	// Usage is what the agent reported; Totals count the gateway's.
	Usage event.Usage `json:"usage"`
}

// AgentErr is an agent.error.
type AgentErr struct {
	Seq     uint64 `json:"seq"`
	TS      string `json:"ts"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Event is any other entry of the session: its creation and titles,
// memory flushes, tool definitions loaded, crashes and restarts, rollbacks,
// notes. Data is the entry's payload verbatim.
type Event struct {
	Seq     uint64          `json:"seq"`
	TS      string          `json:"ts"`
	Type    string          `json:"type"`
	Session string          `json:"session"` // "" for an engine-wide entry
	Summary string          `json:"summary"`
	Data    json.RawMessage `json:"data"`
}
