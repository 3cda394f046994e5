package engine

import (
	"cmp"
	"context"
	"fmt"

	"github.com/opx-dev/opx/engine/executor"
	"github.com/opx-dev/opx/engine/judge"
	"github.com/opx-dev/opx/engine/llm"
	"github.com/opx-dev/opx/engine/mcp"
	"github.com/opx-dev/opx/engine/tier2"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/replay/rerun"
)

// ReplayMode is what an engine in replay mode asks of the driver that
// re-drives a recorded session (engine/redrive): the core owns this
// interface and never imports the driver, which NewReplay hands it.
// Everything the engine does in replay mode goes through it: the
// pipeline serves allowed calls from the record (Live, Execute,
// RecordedLinks), approvals keep their recorded ids and answers
// (ApprovalID, Answer), the MCP tools are the recorded listings
// (MCPTools, MCPWritable), tier 2 runs on the recorded model (Tier2), and
// Run starts Drive, which feeds the record and stops the engine.
type ReplayMode interface {
	// Recording is the session re-driven.
	Recording() *rerun.Recording
	// Attach gives the driver the engine New built, before it runs.
	Attach(e *Engine)
	// Drive feeds the record to e, then stops e (StopReplay). Run calls
	// it in its own goroutine.
	Drive(ctx context.Context, e *Engine)
	// Live reports whether an allowed call runs for real rather than
	// being served from the record by Execute.
	Live(p judge.Proposal) bool
	// Execute stands in for the snapshot and executor of an allowed call.
	Execute(ctx context.Context, p *Pipeline, prop judge.Proposal, call executor.Call, def executor.ToolDef) (ToolOutcome, error)
	// RecordedLinks are the links recorded with the proposal p replays.
	RecordedLinks(p judge.Proposal) map[string]string
	// ApprovalID names a new approval as the record named it; Answer
	// resolves it as the record answered it.
	ApprovalID(p judge.Proposal) string
	Answer(a *Approvals, id string)
	// MCPTools and MCPWritable are the MCP servers' tools as the record
	// listed them for the message being fed.
	MCPTools() []mcp.Tool
	MCPWritable(server string) bool
	// Tier2 is the recorded tier 2 model (nil: none), its daily budget
	// and the recorded workspace it is shown.
	Tier2() (provider llm.Provider, budget int, workspace string)
	// OffRecord reports whether the replay left the record; OffRecordf
	// notes where it did; Fail ends the rerun with an error; Blobs reads
	// the named blobs from the record.
	OffRecord() bool
	OffRecordf(format string, args ...any)
	Fail(err error)
	Blobs(names ...string) [][]byte
}

// NewReplay returns an engine in replay mode: New's, with r re-driving
// the record.
func NewReplay(opts Options, r ReplayMode) (*Engine, error) {
	opts.replay = r
	return New(opts)
}

// setupReplay puts an engine New is building into replay mode.
func (e *Engine) setupReplay(mcpSource *mcp.Source) {
	s := e.opts.replay
	e.pipe.replay = s
	// MCP tools in replay mode: no server runs (engine/redrive).
	mcpSource.List = s.MCPTools
	mcpSource.Writable = s.MCPWritable
	mcpSource.Call = nil
	s.Attach(e)
	if provider, budget, workspace := s.Tier2(); provider != nil {
		// Built here, not by New: the evaluator shows the model the
		// recorded workspace, not the replay's empty one.
		t2, err := tier2.NewLLMEvaluator(tier2.LLMEvaluatorConfig{Recorder: e.rec, Provider: provider, Retry: e.opts.Retry,
			Budget: budget, Workspace: workspace})
		if err == nil {
			e.pipe.Tier2 = t2
		}
	}
	// Approvals keep their recorded ids (the id is in the answer the
	// agent reads, so in the next request body) and are answered as
	// recorded, the moment they are asked.
	e.approvals.id = s.ApprovalID
	publish := e.approvals.publish
	e.approvals.publish = func(session, messageID, typ string, seq uint64, data any) {
		if publish != nil {
			publish(session, messageID, typ, seq, data)
		}
		if m, ok := data.(map[string]any); ok && typ == "approval_requested" {
			id, _ := m["approval_id"].(string)
			s.Answer(e.approvals, id)
		}
	}
}

// driveReplay hands the running engine to the driver (ReplayMode.Drive).
func (e *Engine) driveReplay(ctx context.Context) {
	e.opts.replay.Drive(ctx, e)
}

// What engine.started records so that a rerun can rebuild the engine's
// configuration (engine/redrive rebuilds it).

// checkPolicyText refuses a policy text that is not the evaluator's
// policy: engine.started would name one policy and hold another.
func checkPolicyText(opts Options) error {
	if opts.PolicyText == nil {
		return nil
	}
	if got, want := ledger.Sum(opts.PolicyText), opts.Evaluator.PolicyHash(); got != want {
		return fmt.Errorf("engine: the policy text hashes to %s, the evaluator's policy to %s", got, want)
	}
	return nil
}

// completeStarted adds to engine.started what a rerun needs beside the
// hashes, and returns the blobs it names (the policy text).
func (e *Engine) completeStarted(s *event.EngineStarted) [][]byte {
	var blobs [][]byte
	text := e.opts.PolicyText
	if _, ok := e.opts.Evaluator.(ReadOnlyPolicy); ok && text == nil {
		text = []byte(readOnlyPolicyText)
	}
	if text != nil && ledger.Sum(text).String() == s.PolicyHash {
		s.PolicyBlob = s.PolicyHash
		blobs = append(blobs, text)
	}
	s.Shield = e.opts.ShieldEnv
	s.MaxToolCalls = e.opts.MaxToolCalls
	s.ApprovalTimeoutMS = e.approvals.timeout.Milliseconds()
	s.ProviderMaxTokens = e.opts.ProviderMaxTokens
	if t2 := e.opts.Tier2Provider; t2 != nil {
		s.Tier2Provider, s.Tier2Model = t2.Name(), t2.Model()
		s.Tier2DailyBudget = cmp.Or(e.opts.Tier2DailyBudget, tier2.DefaultDailyBudget)
	}
	if a := e.opts.Agents; a.Enabled {
		s.Agents = &event.AgentLimits{MaxConcurrent: a.MaxConcurrent, MaxRounds: a.MaxRounds, TimeoutMS: a.Timeout.Milliseconds()}
	}
	s.Replay = e.opts.replay != nil
	return blobs
}
