package engine

import (
	"context"

	"github.com/opx-dev/opx/engine/agentwire"
	"github.com/opx-dev/opx/engine/judge"
	"github.com/opx-dev/opx/engine/llm"
	"github.com/opx-dev/opx/engine/tier2"
	"github.com/opx-dev/opx/ledger"
)

// Tier 2 (the model asked about escalations) lives in engine/tier2,
// below the core: the engine builds it (New, setupReplay) and asks it
// through Tier2; it records through the engine's Recorder.

// Tier2 answers escalations to tier 2 (tier2.LLMEvaluator).
type Tier2 interface {
	// Judge returns an allow or block verdict (tier 2) on p, which esc
	// escalated. The error is non-nil only when the ledger failed.
	Judge(ctx context.Context, p judge.Proposal, esc judge.Verdict) (judge.Verdict, error)
}

var _ tier2.Recorder = (*Recorder)(nil)

// RecordLLMResponse records the llm.response of one exchange the way the
// gateway records its own (agentwire.LLMResponse): tier 2's, through
// tier2.Recorder.
func (r *Recorder) RecordLLMResponse(ctx context.Context, d ledger.Durability, session string, p llm.Provider, subagent, reqID string, x *llm.Exchange, callErr error) (uint64, error) {
	resp, blobs := agentwire.LLMResponse(p, subagent, reqID, x, callErr)
	return r.Record(ctx, d, session, resp, blobs...)
}
