package event

import (
	"errors"
	"fmt"
	"strings"
)

// Types of the engine area: its lifecycle and the directives it sends.
const (
	TypeEngineStarted  = "engine.started"
	TypeEngineStopped  = "engine.stopped"
	TypeEngineCrashed  = "engine.crashed"
	TypeProcessRequest = "engine.process_request"
	TypeToolResult     = "engine.tool_result"
	TypeToolDefs       = "engine.tool_defs"
	TypeShutdown       = "engine.shutdown"
)

func init() {
	register(func() Payload { return &EngineStarted{} })
	register(func() Payload { return &EngineStopped{} })
	register(func() Payload { return &EngineCrashed{} })
	register(func() Payload { return &ProcessRequest{} })
	register(func() Payload { return &ToolResult{} })
	register(func() Payload { return &ToolDefs{} })
	register(func() Payload { return &Shutdown{} })
}

// EngineStarted is written when an engine opens the ledger. The hashes are
// BLAKE3 of the config and policy files as read, so a later reader can tell
// which rules were in force.
type EngineStarted struct {
	Version    string `json:"version"`
	PID        int    `json:"pid"`
	Workspace  string `json:"workspace"`
	ConfigHash string `json:"config_hash"`
	Policy     string `json:"policy"` // the policy's name or file
	PolicyHash string `json:"policy_hash"`
	Provider   string `json:"provider"`
	Model      string `json:"model"`
	Replay     bool   `json:"replay,omitempty"` // an engine in replay mode

	// What `opx replay --rerun` needs to rebuild the engine's
	// configuration; optional, so ledgers written before still verify.

	// PolicyBlob is the policy's text as a blob; it equals PolicyHash,
	// so a rerun re-evaluates under exactly the text that was in force.
	PolicyBlob string `json:"policy_blob,omitempty"`
	// Shield is what Shield judged paths against beside the policy.
	Shield *ShieldEnv `json:"shield,omitempty"`
	// MaxToolCalls bounds tool calls per message.
	MaxToolCalls int `json:"max_tool_calls,omitempty"`
	// ApprovalTimeoutMS is how long an escalation waited for a human.
	ApprovalTimeoutMS int64 `json:"approval_timeout_ms,omitempty"`
	// ProviderMaxTokens is the provider's default max_tokens where it
	// goes into every request body (Anthropic); 0 for the default.
	ProviderMaxTokens int64 `json:"provider_max_tokens,omitempty"`
	// Tier2Provider and Tier2Model name the tier 2 evaluator's model
	// when one was configured; Tier2DailyBudget is its daily budget.
	Tier2Provider    string `json:"tier2_provider,omitempty"`
	Tier2Model       string `json:"tier2_model,omitempty"`
	Tier2DailyBudget int    `json:"tier2_daily_budget,omitempty"`
	// Agents are the sub-agent limits when the agent tools were
	// offered; nil when they were not.
	Agents *AgentLimits `json:"agents,omitempty"`
}

// AgentLimits are the limits an engine enforced on sub-agents (config
// agents:).
type AgentLimits struct {
	MaxConcurrent int   `json:"max_concurrent"`
	MaxRounds     int   `json:"max_rounds"`
	TimeoutMS     int64 `json:"timeout_ms"`
}

// ShieldEnv is what Shield resolves and protects paths with, beside the
// policy: the user's home ("~" and credential paths), the paths no tool
// may reach (opx's state) and the paths tools may only read (a policy
// file kept in the workspace). Verdict reasons name these paths.
type ShieldEnv struct {
	Home      string   `json:"home"`
	Protected []string `json:"protected"`
	ReadOnly  []string `json:"read_only"`
	// Rules is the version of Shield's rules that judged (shield.RulesVersion);
	// absent in records made before it was recorded (version 1).
	Rules string `json:"rules,omitempty"`
}

func (*EngineStarted) Type() string { return TypeEngineStarted }

func (e *EngineStarted) Validate() error {
	if e.PID <= 0 {
		return errors.New("pid must be positive")
	}
	if e.PolicyBlob != "" && e.PolicyBlob != e.PolicyHash {
		return errors.New("policy_blob must be the policy's hash, policy_hash")
	}
	if e.MaxToolCalls < 0 || e.ApprovalTimeoutMS < 0 || e.ProviderMaxTokens < 0 || e.Tier2DailyBudget < 0 {
		return errors.New("limits must not be negative")
	}
	if e.Tier2Model != "" && e.Tier2Provider == "" {
		return errors.New("tier2_model needs tier2_provider")
	}
	return firstErr(need("version", e.Version, "workspace", e.Workspace, "policy", e.Policy, "provider", e.Provider),
		needHash("config_hash", e.ConfigHash, false), needHash("policy_hash", e.PolicyHash, false),
		needHash("policy_blob", e.PolicyBlob, true))
}

// EngineStopped is the engine's last entry on an orderly stop. Reason is
// free text; Cause says why in one of the Stop* words (absent in entries
// written before it existed).
type EngineStopped struct {
	Reason   string `json:"reason"`
	Cause    string `json:"cause,omitempty"`
	UptimeMS int64  `json:"uptime_ms"`
}

// The causes of engine.stopped.
const (
	StopShutdown    = "shutdown"     // a client asked (opx stop)
	StopRestart     = "restart"      // a client asked for a restart (exit 75)
	StopSignal      = "signal"       // SIGTERM or SIGINT, normally from its manager
	StopManagerGone = "manager-gone" // its manager died (the liveness pipe closed)
	StopError       = "error"        // the engine failed (the ledger, its gRPC server, the agent)
)

func (*EngineStopped) Type() string { return TypeEngineStopped }

func (e *EngineStopped) Validate() error {
	switch e.Cause {
	case "", StopShutdown, StopRestart, StopSignal, StopManagerGone, StopError:
	default:
		return fmt.Errorf("unknown cause %q", e.Cause)
	}
	return need("reason", e.Reason)
}

// EngineCrashed is written by the next engine to open a ledger whose last
// engine.started has no engine.stopped: the previous engine died.
type EngineCrashed struct {
	StartedSeq uint64 `json:"started_seq"` // the engine.started of the run that died
	LastSeq    uint64 `json:"last_seq"`    // the last entry that run wrote
	Detail     string `json:"detail"`

	// How that run's process ended, as the process that saw it end or
	// signalled it wrote down (its manager, or opx stop for an engine
	// without one); all absent when nothing was written down for it (and
	// in entries written before these existed). PID is that process;
	// ExitCode its exit status when it exited; Signal the signal that
	// ended it ("SIGKILL"); Sender who sent that signal (CrashSender*),
	// and Reason why, when opx sent it. The kernel does not name the
	// sender of a signal to anyone, so a signal opx did not send is
	// CrashSenderUnknown.
	PID      int    `json:"pid,omitempty"`
	ExitCode int    `json:"exit_code,omitempty"`
	Signal   string `json:"signal,omitempty"`
	Sender   string `json:"sender,omitempty"`
	Reason   string `json:"reason,omitempty"`
}

// The senders of the signal that ended a crashed engine.
const (
	CrashSenderManager = "manager"  // its own process manager (the reason says why)
	CrashSenderStop    = "opx-stop" // opx stop or a new manager, stopping an engine whose manager was gone
	CrashSenderUnknown = "unknown"  // not opx: another process, or the kernel (OOM killer, a limit)
)

// maxCrashReason bounds engine.crashed's reason.
const maxCrashReason = 1000

func (*EngineCrashed) Type() string { return TypeEngineCrashed }

func (e *EngineCrashed) Validate() error {
	if e.LastSeq < e.StartedSeq {
		return errors.New("last_seq before started_seq")
	}
	if e.PID < 0 {
		return errors.New("pid must not be negative")
	}
	if e.Signal != "" && (len(e.Signal) > 16 || !strings.HasPrefix(e.Signal, "SIG") || strings.ContainsFunc(e.Signal[3:], notSignalChar)) {
		return fmt.Errorf("signal %q is not a signal's name", e.Signal)
	}
	switch e.Sender {
	case "":
		if e.Reason != "" {
			return errors.New("reason without sender")
		}
	case CrashSenderManager, CrashSenderStop, CrashSenderUnknown:
		if e.Signal == "" {
			return errors.New("sender without signal")
		}
		if e.Sender == CrashSenderUnknown && e.Reason != "" {
			return errors.New("reason of an unknown sender")
		}
	default:
		return fmt.Errorf("unknown sender %q", e.Sender)
	}
	if len(e.Reason) > maxCrashReason {
		return errors.New("reason too long")
	}
	return need("detail", e.Detail)
}

// ProcessRequest records the directive asking the agent to answer a user
// message. The history sent is the session's projection up to the message,
// so only its length is recorded.
type ProcessRequest struct {
	SubAgentID string   `json:"subagent_id,omitempty"`
	MessageID  string   `json:"message_id"`
	Content    string   `json:"content"`
	Mode       string   `json:"mode"`
	History    int      `json:"history"` // messages of history sent
	Tools      []string `json:"tools"`   // tool names offered
}

func (*ProcessRequest) Type() string { return TypeProcessRequest }

func (p *ProcessRequest) Validate() error {
	if p.History < 0 {
		return errors.New("history must not be negative")
	}
	return firstErr(need("message_id", p.MessageID), oneOf("mode", p.Mode, "normal", "otr"))
}

// ToolResult records the result delivered to the agent. Content above
// InlineLimit is a blob.
type ToolResult struct {
	SubAgentID string `json:"subagent_id,omitempty"`
	CallID     string `json:"call_id"`
	Content    string `json:"content,omitempty"`
	Blob       string `json:"blob,omitempty"`
	Size       int64  `json:"size"`
	IsError    bool   `json:"is_error"`
}

func (*ToolResult) Type() string { return TypeToolResult }

func (r *ToolResult) Validate() error {
	return firstErr(need("call_id", r.CallID), inlineOrBlob(r.Content, r.Blob, r.Size))
}

// ToolDefs records the tool definitions delivered for a load_tools call.
type ToolDefs struct {
	SubAgentID string   `json:"subagent_id,omitempty"`
	CallID     string   `json:"call_id"`
	Groups     []string `json:"groups"`
	Tools      []string `json:"tools"`
}

func (*ToolDefs) Type() string { return TypeToolDefs }

func (d *ToolDefs) Validate() error { return need("call_id", d.CallID) }

// Shutdown records the directive telling the agent to stop.
type Shutdown struct {
	SubAgentID string `json:"subagent_id,omitempty"`
	Reason     string `json:"reason"`
}

func (*Shutdown) Type() string { return TypeShutdown }

func (s *Shutdown) Validate() error { return need("reason", s.Reason) }

// InlineLimit is the largest text inlined in an entry; anything longer is
// stored as a blob and named by hash.
const InlineLimit = 4 << 10

// Inline returns text as an (content, blob hash, blob) triple: inline when
// short, else a blob to store with the entry.
func Inline(text string) (content, blobHash string, blob []byte) {
	if len(text) <= InlineLimit {
		return text, "", nil
	}
	b := []byte(text)
	return "", sum(b), b
}

// inlineOrBlob checks a content/blob pair: never both, and an inline
// content's size must match.
func inlineOrBlob(content, blob string, size int64) error {
	if content != "" && blob != "" {
		return errors.New("content and blob are exclusive")
	}
	if n, ok := Withheld(content + blob); ok && (content == "" || blob == "") {
		// Off the record: the commitment carries the size.
		if n != size {
			return errors.New("size does not match the withheld content")
		}
		return nil
	}
	if blob != "" {
		return needHash("blob", blob, false)
	}
	if int64(len(content)) != size {
		return errors.New("size does not match the inline content")
	}
	return nil
}

// notSignalChar reports whether r cannot be in a signal's name after
// "SIG" (SIGRTMIN+3 has a digit and a plus).
func notSignalChar(r rune) bool {
	return !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '+' || r == '-')
}
