package redrive

import (
	"context"

	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/engine/executor"
	"github.com/opx-dev/opx/engine/judge"
	"github.com/opx-dev/opx/engine/llm"
	"github.com/opx-dev/opx/engine/mcp"
	"github.com/opx-dev/opx/engine/tier2"
	"github.com/opx-dev/opx/replay/rerun"
)

// replayState is the engine's engine.ReplayMode: what the core asks of
// replay mode, each method the replay's own.
var _ engine.ReplayMode = (*replayState)(nil)

// Recording implements engine.ReplayMode.
func (s *replayState) Recording() *rerun.Recording { return s.rec }

// Attach implements engine.ReplayMode: e is the replay engine, which it
// puts into replay mode: tier 2 runs
// on the recorded model, and approvals keep their recorded ids and are
// answered as recorded, the moment they are asked.
func (s *replayState) Attach(e *engine.Engine) {
	s.mu.Lock()
	s.eng = e
	s.mu.Unlock()
	if provider, budget, workspace := s.Tier2(); provider != nil {
		// Built here, not by New: the evaluator shows the model the
		// recorded workspace, not the replay's empty one.
		t2, err := tier2.NewLLMEvaluator(tier2.LLMEvaluatorConfig{Recorder: e.Recorder(), Provider: provider, Retry: e.Options().Retry,
			Budget: budget, Workspace: workspace})
		if err == nil {
			e.Pipeline().Tier2 = t2
		}
	}
	e.Approvals().Recorded(s.ApprovalID, s.Answer)
}

// Drive implements engine.ReplayMode (driver.go).
func (s *replayState) Drive(ctx context.Context, e *engine.Engine) { s.drive(ctx, e) }

// Live implements engine.ReplayMode (pipeline.go).
func (s *replayState) Live(p judge.Proposal) bool { return s.live(p) }

// Execute implements engine.ReplayMode (pipeline.go).
func (s *replayState) Execute(ctx context.Context, p *engine.Pipeline, prop judge.Proposal, call executor.Call, def executor.ToolDef) (engine.ToolOutcome, error) {
	return s.execute(ctx, p, prop, call, def)
}

// Recorded implements engine.ReplayMode (pipeline.go).
func (s *replayState) Recorded(p judge.Proposal) judge.Observed { return s.recorded(p) }

// ApprovalID names a new approval as the record named it (rerun.go).
func (s *replayState) ApprovalID(p judge.Proposal) string { return s.approvalID(p) }

// Answer resolves an approval as the record answered it (rerun.go).
func (s *replayState) Answer(a *engine.Approvals, id string) { s.answer(a, id) }

// MCPTools implements engine.ReplayMode (mcp.go).
func (s *replayState) MCPTools() []mcp.Tool { return s.mcpTools() }

// Tier2 is the first engine run's tier 2
// model, served from the record, shown the recorded workspace.
func (s *replayState) Tier2() (llm.Provider, int, string) {
	first := s.rec.FirstEngine()
	if first.Started.Tier2Provider == "" {
		return nil, 0, ""
	}
	return s.tier2, first.Started.Tier2DailyBudget, first.Started.Workspace
}

// OffRecord implements engine.ReplayMode.
func (s *replayState) OffRecord() bool { return s.isOffRecord() }

// OffRecordf implements engine.ReplayMode.
func (s *replayState) OffRecordf(format string, args ...any) { s.offRecordf(format, args...) }

// Fail implements engine.ReplayMode.
func (s *replayState) Fail(err error) { s.fail(err) }

// Blobs implements engine.ReplayMode (pipeline.go).
func (s *replayState) Blobs(names ...string) [][]byte { return s.blobs(names...) }
