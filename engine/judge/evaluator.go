package judge

import (
	"context"
	"encoding/json"

	"github.com/opx-dev/opx/engine/executor"
	"github.com/opx-dev/opx/ledger"
)

// Proposal is a parsed tool call as Shield sees it.
type Proposal struct {
	Session, SubAgentID, MessageID, CallID string
	Tool                                   string
	Args                                   json.RawMessage // canonical JSON object
	ActionHash                             ledger.Hash
	Def                                    executor.ToolDef
	Known                                  bool // the tool exists in the registry
	// Paths are workspace paths the call acts on that its arguments do
	// not name (executor.Pather), for Shield to judge.
	Paths []string
	// Links are where the paths the call names led through symlinks when
	// it was proposed (LinkResolver; recorded in tool.proposed): Shield
	// judges both forms and the executor opens the resolved one.
	Links map[string]string
	// Unknown are reasons the call could not be understood before it was
	// proposed (a coding agent's tool opx does not know, an input that
	// does not decode: agents/toolmap): Shield judges them as it judges
	// what it cannot read itself.
	Unknown []string
}

// Verdict is one tier's decision on a proposal.
type Verdict struct {
	Decision string // event.Allow, event.Block or event.Escalate
	Tier     int
	Rule     string
	Reason   string
}

// Evaluator judges proposals. Shield implements it (ShieldEvaluator);
// ReadOnlyPolicy is the engine's fallback when none is given.
type Evaluator interface {
	// PolicyHash is the BLAKE3 of the policy in force, recorded with
	// every verdict.
	PolicyHash() ledger.Hash
	// Evaluate returns the verdict of every tier consulted, in order;
	// engine.Decide combines them (any block blocks, else an escalation asks).
	Evaluate(ctx context.Context, p Proposal) []Verdict
}
