package judge

import (
	"context"
	"encoding/json"

	"github.com/opx-dev/opx/engine/executor"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
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
	// it was proposed (Observer; recorded in tool.proposed): Shield
	// judges both forms and the executor opens the resolved one.
	Links map[string]string
	// Manifests are the changes the call makes to files a toolchain reads
	// to fetch or run code, Sensitive what it reads that is sensitive, and
	// Taint the session's earlier calls that read something sensitive and
	// ran: observed before the proposal is recorded (Observer, and the
	// engine's taint projection), recorded in tool.proposed, and judged.
	Manifests []event.ManifestChanges
	Sensitive []string
	Taint     []event.Taint
	// Toolchain are the programs the call runs that the workspace
	// declares it uses ("key=file": ShieldEvaluator.Toolchain), observed
	// and recorded as Manifests are.
	Toolchain []string
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

// Observed is what an Observer saw of the world for a proposal, before
// it was recorded and judged.
type Observed struct {
	Links     map[string]string
	Manifests []event.ManifestChanges
	Sensitive []string
	Toolchain []string
	// Taint is the engine's (its taint projection), not an Observer's.
	Taint []event.Taint
}

// Observe sets what o saw on p.
func (p *Proposal) Observe(o Observed) {
	p.Links, p.Manifests, p.Sensitive, p.Taint, p.Toolchain = o.Links, o.Manifests, o.Sensitive, o.Taint, o.Toolchain
}

// Observer is an Evaluator that looks before it judges: where the
// proposal's paths lead through symlinks, what it changes in manifests,
// and what it reads that is sensitive. The engine records what it saw
// with the proposal (tool.proposed), and a replay judges that record
// rather than the filesystem of the day.
type Observer interface {
	Observe(p Proposal) Observed
}
