package redrive

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/engine/executor"
	"github.com/opx-dev/opx/engine/judge"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/replay/rerun"
	"github.com/opx-dev/opx/shield"
)

// replayEvaluator is Shield in replay mode: each proposal is judged by the
// evaluator of the engine run that judged it (its recorded policy, home
// and protected paths), at the time it was recorded, and the verdicts are
// checked against the recorded ones as they come.
type replayEvaluator struct{ s *replayState }

// PolicyHash implements Evaluator: the policy of the last evaluation (the
// pipeline asks after Evaluate), at first that of the first engine run.
func (r *replayEvaluator) PolicyHash() ledger.Hash {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	return r.s.policy
}

// Evaluate implements Evaluator.
func (r *replayEvaluator) Evaluate(ctx context.Context, p judge.Proposal) []judge.Verdict {
	s := r.s
	rp := s.take(p)
	en := s.current()
	s.mu.Lock()
	if rp != nil {
		s.clock = rp.TS
		if rp.Engine != nil {
			en = rp.Engine
		}
	}
	s.mu.Unlock()
	ev, err := s.evaluatorFor(en)
	if err != nil { // checked for every engine run before the replay began
		s.offRecordf("call %s: %v", p.CallID, err)
		return []judge.Verdict{{Decision: event.Block, Tier: 0, Rule: "replay:no-policy", Reason: err.Error()}}
	}
	vs := ev.Evaluate(ctx, p)
	s.mu.Lock()
	s.policy = ev.PolicyHash()
	s.mu.Unlock()
	if rp != nil {
		for i, v := range vs {
			if i >= len(rp.Verdicts) || !sameVerdict(v, rp.Verdicts[i]) {
				s.offRecordf("call %s: Shield now decides %s (tier %d, %s) where the record has %s%s", p.CallID, v.Decision, v.Tier, v.Rule, recordedVerdict(rp, i), rulesNote(en))
				break
			}
		}
	}
	return vs
}

// rulesNote says, when an engine run was judged by other Shield rules than
// this opx's, that a changed verdict may come from the rules.
func rulesNote(en *rerun.Engine) string {
	if rec := recordedRules(en); rec != shield.RulesVersion {
		return fmt.Sprintf(" (the record was judged by Shield rules version %s, this opx has version %s: the rules changed since)", rec, shield.RulesVersion)
	}
	return ""
}

// recordedRules is the Shield rules version an engine run recorded.
func recordedRules(en *rerun.Engine) string {
	if en == nil || en.Started.Shield == nil {
		return shield.RecordedRules("")
	}
	return shield.RecordedRules(en.Started.Shield.Rules)
}

func sameVerdict(v judge.Verdict, r rerun.Verdict) bool {
	return v.Decision == r.Decision && v.Tier == r.Tier && v.Rule == r.Rule && v.Reason == r.Reason
}

func recordedVerdict(rp *rerun.Proposal, i int) string {
	if i >= len(rp.Verdicts) {
		return "no further verdict"
	}
	v := rp.Verdicts[i]
	return fmt.Sprintf("%s (tier %d, %s) at entry %d", v.Decision, v.Tier, v.Rule, v.Seq)
}

// take finds the recorded proposal a produced one replays: the next
// recorded one with its message and call id, if it proposes the same
// action. It is kept for the execution step.
func (s *replayState) take(p judge.Proposal) *rerun.Proposal {
	k := callKey(p.SubAgentID, p.MessageID, p.CallID)
	s.mu.Lock()
	q := s.pending[k]
	var rp *rerun.Proposal
	if len(q) > 0 {
		rp, s.pending[k] = q[0], q[1:]
	}
	s.mu.Unlock()
	switch {
	case rp == nil:
		s.offRecordf("call %s of message %s%s: not proposed in the record", p.CallID, p.MessageID, threadName(p.SubAgentID))
		return nil
	case rp.Tool != p.Tool || rp.Arguments != string(p.Args):
		s.offRecordf("call %s: proposes %s %s where the record (entry %d) has %s %s", p.CallID, p.Tool, p.Args, rp.Seq, rp.Tool, rp.Arguments)
		return nil
	}
	s.mu.Lock()
	s.judged[k] = rp
	s.mu.Unlock()
	return rp
}

// recorded is what was observed with the proposal p replays (the next
// recorded one with its call id, if it proposes the same action: links,
// manifests' changes, sensitive reads, taint), without taking it:
// Evaluate does.
func (s *replayState) recorded(p judge.Proposal) judge.Observed {
	k := callKey(p.SubAgentID, p.MessageID, p.CallID)
	s.mu.Lock()
	defer s.mu.Unlock()
	if q := s.pending[k]; len(q) > 0 && q[0].Tool == p.Tool && q[0].Arguments == string(p.Args) {
		r := q[0]
		return judge.Observed{Links: r.Links, Manifests: r.Manifests, Sensitive: r.Sensitive, Taint: r.Taint, Toolchain: r.Toolchain}
	}
	return judge.Observed{}
}

// live reports whether an allowed call runs for real in replay mode
// rather than being served from the record: the agent tools that start,
// message, wait for and stop sub-agents. Those run against the replay
// engine, so each sub-agent is a real sandboxed agent process re-driven
// like the session's own (its model calls and tool results served from
// its own thread of the record), and its entries are produced, not
// copied.
//
// The answers that depend on timing are served from the record instead,
// so the parent's thread stays deterministic: agent_status and
// list_agents (a sub-agent's state, rounds and elapsed time at that
// moment) and agent_result without waiting (finished or not yet). What
// they answered in the record is what the parent's model saw, so the
// parent's next request body is the recorded one.
func (s *replayState) live(p judge.Proposal) bool {
	if p.Def.Group != engine.GroupAgents {
		return false
	}
	switch p.Tool {
	case "agent_status", "list_agents":
		return false
	case "agent_result":
		var a struct {
			ID   string `json:"id"`
			Wait *bool  `json:"wait"`
		}
		if json.Unmarshal(p.Args, &a) == nil && a.Wait != nil && !*a.Wait {
			return false
		}
		s.mu.Lock()
		rp := s.judged[callKey(p.SubAgentID, p.MessageID, p.CallID)]
		s.mu.Unlock()
		if rp != nil && s.cancelledLater(a.ID, rp.Seq) {
			s.offRecordf("call %s waits for sub-agent %s, which the record has its parent cancel only later", p.CallID, a.ID)
			return false
		}
	}
	// Taken at evaluation for a served execution: not needed.
	s.mu.Lock()
	delete(s.judged, callKey(p.SubAgentID, p.MessageID, p.CallID))
	s.mu.Unlock()
	if p.Tool == "cancel_agent" {
		s.awaitCancel(p)
	}
	return true
}

// execute stands in for the snapshot and the executor of an allowed call
// (engine.Pipeline.Handle calls it in replay mode): it records again what the
// live engine recorded for the call (its snapshot, exec.started and
// result) and answers the agent as the live engine did. No workspace is
// read or written.
func (s *replayState) execute(ctx context.Context, p *engine.Pipeline, prop judge.Proposal, call executor.Call, def executor.ToolDef) (engine.ToolOutcome, error) {
	k := callKey(prop.SubAgentID, prop.MessageID, prop.CallID)
	s.mu.Lock()
	rp := s.judged[k]
	delete(s.judged, k)
	s.mu.Unlock()
	offRecord := func(why string) (engine.ToolOutcome, error) {
		s.offRecordf("call %s: %s", prop.CallID, why)
		return engine.ToolOutcome{Content: "error: opx replay: " + why, IsError: true}, nil
	}
	if rp == nil {
		return offRecord("the record holds no execution of this call")
	}
	if def.Mutating && !def.WorkspaceWide {
		// As Handle: a tool that cannot name what it changes, or bad
		// arguments, never reach a snapshot.
		_, ok, terr := p.ToolsFor(prop.Session).Touches(call)
		switch {
		case !ok:
			return engine.ToolOutcome{Content: "blocked: " + prop.Tool + " cannot say what it will change, so no snapshot can be taken", IsError: true}, nil
		case terr != nil:
			return engine.ToolOutcome{Content: "error: " + terr.Error(), IsError: true}, nil
		}
	}
	if !rp.Started {
		// Allowed but not run in the record: its snapshot was refused.
		// The answer is the recorded one.
		if rp.Result == nil {
			return offRecord("the record neither ran nor answered this call")
		}
		return engine.ToolOutcome{Content: rp.ResultContent, IsError: rp.Result.IsError}, nil
	}
	if def.Mutating {
		if rp.Snapshot == nil {
			return offRecord("the record ran this call without a snapshot")
		}
		snap := *rp.Snapshot
		if _, err := p.Recorder.Record(ctx, ledger.Async, prop.Session, &snap, s.blobs(snapshotBlobs(&snap)...)...); err != nil {
			return engine.ToolOutcome{}, err
		}
	}
	if refusal, err := p.RecordStarted(ctx, prop); err != nil || refusal != "" {
		return engine.ToolOutcome{Content: refusal, IsError: true}, err
	}
	start := time.Now()
	if prop.SubAgentID != "" && s.heldAt(prop.SubAgentID, rp.DoneSeq) {
		// Finished after its sub-agent's end, or never: recorded once
		// the rerun's sub-agent has ended too (subagents.go).
		s.hold(prop.SubAgentID)
		if rp.DoneSeq == 0 {
			return engine.ToolOutcome{Content: "error: the sub-agent ended before this call finished", IsError: true}, nil
		}
	}
	switch {
	case rp.Failed != nil:
		f := *rp.Failed
		f.DurationMS = time.Since(start).Milliseconds()
		if _, err := p.Recorder.Record(ctx, ledger.Sync, prop.Session, &f); err != nil {
			return engine.ToolOutcome{}, err
		}
	case rp.Completed != nil:
		c := *rp.Completed
		c.DurationMS = time.Since(start).Milliseconds()
		names := []string{c.ResultBlob}
		for _, f := range c.Pre {
			names = append(names, f.Blob)
		}
		if _, err := p.Recorder.Record(ctx, ledger.Sync, prop.Session, &c, s.blobs(names...)...); err != nil {
			return engine.ToolOutcome{}, err
		}
		if def.UntrustedResult {
			// Shield reads the recorded result again: its finding is
			// produced, not copied, and compared with the record.
			full, err := s.rec.Result(&c)
			if err != nil {
				return offRecord("the recorded result cannot be read: " + err.Error())
			}
			if _, err := p.FlagResult(ctx, prop, def, full); err != nil {
				return engine.ToolOutcome{}, err
			}
		}
	default:
		return offRecord("the record started this call but holds no result")
	}
	if rp.Result == nil {
		return offRecord("the record holds no answer to this call")
	}
	return engine.ToolOutcome{Content: rp.ResultContent, IsError: rp.Result.IsError}, nil
}

// snapshotBlobs names the blobs a snapshot entry names.
func snapshotBlobs(s *event.Snapshot) []string {
	names := []string{s.ManifestBlob}
	for _, f := range s.Files {
		names = append(names, f.Blob)
	}
	return names
}

// blobs reads the named blobs from the record, to be stored again with
// the entry that names them. A blob the record no longer holds (pruned)
// is left out: the rerun's ledger is scratch.
func (s *replayState) blobs(names ...string) [][]byte {
	var out [][]byte
	seen := map[string]bool{}
	for _, n := range names {
		if n == "" || seen[n] {
			continue
		}
		seen[n] = true
		if b, err := s.rec.Blob(n); err == nil {
			out = append(out, b)
		}
	}
	return out
}
