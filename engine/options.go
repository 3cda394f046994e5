package engine

import (
	"context"
	"encoding/json"
	"io"
	"os/exec"
	"time"

	"github.com/opx-dev/opx/chronicle"
	"github.com/opx-dev/opx/engine/checkpoint"
	"github.com/opx-dev/opx/engine/executor"
	"github.com/opx-dev/opx/engine/judge"
	"github.com/opx-dev/opx/engine/llm"
	"github.com/opx-dev/opx/engine/mcp"
	"github.com/opx-dev/opx/engine/outward"
	"github.com/opx-dev/opx/engine/supervise"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/sandbox"
)

// Options configure an engine.
type Options struct {
	Workspace string
	Ledger    *ledger.Ledger // opened for writing by the caller, closed by it
	Provider  llm.Provider
	Retry     llm.RetryPolicy
	Evaluator judge.Evaluator
	// ConfigHash and Policy/PolicyHash describe the configuration in force
	// for engine.started.
	ConfigHash ledger.Hash
	Policy     string
	Version    string
	// ClientToken authenticates clients (gRPC metadata); required.
	ClientToken string
	// SpawnAgent starts the agent (its token must travel only through the
	// environment). Nil runs no agent (tests that connect their own).
	SpawnAgent func(ctx context.Context, l AgentLaunch) (*exec.Cmd, error)
	// RequireSandbox refuses an agent whose sandbox is unavailable, not
	// only one whose sandbox does not hold.
	RequireSandbox bool
	// AgentPolicy is the agent's crash budget; zero means the defaults.
	AgentPolicy supervise.Policy
	// MaxToolCalls bounds tool calls per message; default 50.
	MaxToolCalls int
	// Stdout receives the start-up protocol (PORT:, WEB_DISABLED).
	Stdout io.Writer
	// Logf reports what the engine does for its operator.
	Logf func(format string, args ...any)
	// ManagerPID is reported by GetStatus.
	ManagerPID int
	// PreviousEnd is how the previous engine process ended, as its
	// manager (or opx stop) wrote it down; nil when nothing was. It goes
	// into the engine.crashed this engine records, when that is about
	// the same process (the pid its engine.started names).
	PreviousEnd *ProcessEnd
	// RunDir holds the engine's run-time files (the canary targets); the
	// engine removes its own on every orderly exit and, at start, those of
	// engines that died. Default os.TempDir().
	RunDir string
	// Retention bounds what snapshots keep; zero means keep everything.
	Retention chronicle.Retention
	// SnapshotExclude overrides DefaultExclude for workspace snapshots.
	SnapshotExclude []string
	// Protected are workspace-relative paths no tool may change (opx's
	// configuration, the policy file); nil means just ".opx". A command
	// that changes one has the change undone at once.
	Protected []string
	// Shell offers execute_command with this configuration (its Launcher
	// sandboxes each command); nil offers no shell.
	Shell *executor.ShellConfig
	// Git offers the git tools; nil offers none.
	Git *executor.GitConfig
	// HTTP offers http_request; nil offers none.
	HTTP *executor.HTTPConfig
	// Tier2Provider, if set, is the model asked about escalations to
	// tier 2 (it may be Provider itself); without it they go to a human.
	Tier2Provider llm.Provider
	// Tier2DailyBudget bounds tier 2 model calls per UTC day; default
	// tier2.DefaultDailyBudget.
	Tier2DailyBudget int
	// ApprovalTimeout is how long an escalation waits for a human before
	// it is denied; default DefaultApprovalTimeout.
	ApprovalTimeout time.Duration
	// Agents configures sub-agents (rooms.go: SubAgents); not Enabled, the
	// agent tools are not offered.
	Agents AgentsConfig
	// MCP runs MCP servers and offers their tools (mcp.Source,
	// mcp.Servers); nil or
	// no Specs runs none. Its Sandbox also runs the upstreams of
	// `opx mcp-proxy` sessions (engine/mcpproxy), which may name its Specs;
	// nil refuses them.
	MCP *mcp.Config

	// PolicyText is the policy's text, recorded as a blob with
	// engine.started so a rerun re-evaluates under it; its BLAKE3 must be
	// the Evaluator's PolicyHash. Nil records no text (ReadOnlyPolicy's
	// is known).
	PolicyText []byte
	// ShieldEnv is what Shield resolves and protects paths with beside
	// the policy, recorded with engine.started for reruns.
	ShieldEnv *event.ShieldEnv
	// ProviderMaxTokens is the provider's configured default max_tokens,
	// recorded with engine.started (it is part of Anthropic request
	// bodies).
	ProviderMaxTokens int64
	// Checkpoints keeps the ledger's signing key (the ledger must be
	// opened with its Sign as Options.SignCheckpoint); nil signs nothing
	// (tests, reruns).
	Checkpoints *checkpoint.Keeper
	// CheckpointEntries and CheckpointInterval: a checkpoint is recorded
	// (and signed) once that many entries were appended since the last,
	// or that long after it when anything was; defaults 1000 and 10 s.
	CheckpointEntries  uint64
	CheckpointInterval time.Duration
	// Fleet starts shipping the ledger to NATS JetStream (engine/outward;
	// fleet/ship, started by whoever starts the engine); nil ships
	// nothing.
	Fleet outward.StartShipper
	// Witnesses submits each checkpoint the engine signs to C2SP
	// tlog-witnesses (config ledger.witnesses; engine/witness, started by
	// whoever starts the engine); nil submits to none.
	Witnesses outward.StartWitnesses
	// Telemetry exports the ledger's entries as OpenTelemetry spans as
	// they become durable (config telemetry.otlp; telemetry.Live, started
	// by whoever starts the engine); nil exports nothing.
	Telemetry outward.StartTelemetry
	// Services registers the gRPC services that are not the core's
	// (engine/grpcapi.Register: the ledger and Chronicle services) on the
	// engine's server, behind the same authenticator; nil serves only
	// the core's.
	Services ServiceRegistrar
	// replay, set by NewReplay only, runs the engine in replay mode
	// (rooms.go: ReplayMode, engine/redrive): it re-drives a recorded session
	// and stops when done.
	replay ReplayMode
}

// AgentLaunch is what a new agent is started with.
type AgentLaunch struct {
	Addr   string // the engine's gRPC address
	Token  string // 128 random bits, hex
	Canary sandbox.CanaryTargets
	// SubAgentID, set for a sub-agent, makes the process a sub-agent of
	// ParentSession: it talks RunSubAgent and its token travels in
	// OPX_SUB_AGENT_TOKEN. MaxRounds bounds its model calls per message
	// (0: the agent's default).
	SubAgentID    string
	ParentSession string
	MaxRounds     int
}

// ProcessEnd is how an engine process ended, as the process that waited
// for it or signalled it wrote it down (registry.End): its pid, its exit
// code or the signal that ended it, and for a signal who sent it
// (event.CrashSender*) and why.
type ProcessEnd struct {
	PID      int
	ExitCode int
	Signal   string // "SIGKILL"; "" when it exited
	Sender   string // event.CrashSenderManager, CrashSenderStop, CrashSenderUnknown, or ""
	Reason   string
	// Unconfirmed marks a note written before the signal was sent whose
	// sender did not see the process end (it died itself, or could not
	// wait for a process not its child).
	Unconfirmed bool
}

// submitCheckpoint hands the signed note of the durable checkpoint entry
// seq to the witnesses (engine/outward).
func (e *Engine) submitCheckpoint(seq uint64) {
	en, err := e.opts.Ledger.Get(seq)
	var c ledger.CheckpointPayload
	if err == nil {
		err = json.Unmarshal(en.Data, &c)
	}
	if err != nil {
		e.opts.Logf("engine: witnesses: checkpoint %d: %v", seq, err)
		return
	}
	e.out.Submit(c.Note)
}

// mcpRecorder is the Recorder the engine's servers record through: a
// ledger failure stops the engine, as any of its own.
func (e *Engine) mcpRecorder() mcp.Recorder {
	return func(ctx context.Context, d ledger.Durability, session string, p event.Payload, blobs ...[]byte) error {
		_, err := e.rec.Record(context.WithoutCancel(ctx), d, session, p, blobs...)
		if err != nil {
			e.fatal(err)
		}
		return err
	}
}
