package engine

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/opx-dev/opx/chronicle"
	"github.com/opx-dev/opx/engine/executor"
	"github.com/opx-dev/opx/engine/judge"
	"github.com/opx-dev/opx/engine/undo"
	"github.com/opx-dev/opx/internal/textclip"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// The steps of Pipeline.Handle, in its order: judge, snapshot, record
// start (recordStarted, pipeline.go), execute, record outcome.

// judge has prop judged (Restrict, else the Evaluator, then tier 2 or a
// human for an escalation), records each verdict as it comes, and
// answers the refusal to give when the final decision does not let the
// call run; nil when it may.
func (p *Pipeline) judge(ctx context.Context, prop judge.Proposal) (*ToolOutcome, error) {
	session, subagent, messageID, callID, tool, def := prop.Session, prop.SubAgentID, prop.MessageID, prop.CallID, prop.Tool, prop.Def
	var verdicts []judge.Verdict
	if p.Restrict != nil {
		if v := p.Restrict(prop); v != nil {
			verdicts = []judge.Verdict{*v}
		}
	}
	if verdicts == nil {
		verdicts = p.Evaluator.Evaluate(ctx, prop)
	}
	policy := p.Evaluator.PolicyHash().String()
	record := func(v judge.Verdict) error {
		sv := &event.ShieldVerdict{SubAgentID: subagent, CallID: callID, Decision: v.Decision, Tier: v.Tier, Rule: v.Rule,
			Reason: v.Reason, ActionHash: prop.ActionHash.String(), PolicyHash: policy}
		seq, err := p.Recorder.Record(ctx, ledger.Async, session, sv)
		if err != nil {
			return err
		}
		if p.OnVerdict != nil {
			p.OnVerdict(session, messageID, seq, sv)
		}
		return nil
	}
	for _, v := range verdicts {
		if err := record(v); err != nil {
			return nil, err
		}
	}
	final := Decide(verdicts)
	if final.Decision == event.Escalate {
		// Tier 2 or a human answers, each answer recorded as a verdict
		// (and a human's as approval.resolved first).
		v, err := p.escalate(ctx, prop, final, record)
		if err != nil {
			return nil, err
		}
		final = v
	}
	switch {
	case final.Decision == event.Block:
		return &ToolOutcome{Content: fmt.Sprintf("blocked by Shield (%s): %s", final.Rule, final.Reason), IsError: true}, nil
	case final.Decision != event.Allow:
		// No verdict at all: fail closed.
		return &ToolOutcome{Content: "blocked: no allowing verdict for " + tool, IsError: true}, nil
	case def.Mutating && p.Chronicle == nil:
		// Mutating tools need a Chronicle snapshot first; without one the
		// pipeline refuses rather than run unrecoverable changes.
		return &ToolOutcome{Content: "blocked: " + tool + " changes the workspace and no snapshot can be taken", IsError: true}, nil
	}
	return nil, nil
}

// callSnapshot is what snapshot took before a mutating call runs.
type callSnapshot struct {
	touched []string                // files snapshots: the paths named
	before  *undo.WorkspaceSnapshot // workspace snapshots: the tree to diff
}

// snapshot takes the Chronicle snapshot a mutating call needs before it
// runs (the caller holds the Chronicle's lock), and answers the refusal
// to give when none could be taken: nothing runs that could not be
// undone.
func (p *Pipeline) snapshot(ctx context.Context, tools *executor.Registry, prop judge.Proposal, call executor.Call) (callSnapshot, *ToolOutcome, error) {
	return p.snapshotWith(ctx, prop, func() ([]string, bool, error) { return tools.Touches(call) })
}

// snapshotWith is snapshot with the paths a call that is not
// workspace-wide will change given by touches (ok false: it cannot say).
func (p *Pipeline) snapshotWith(ctx context.Context, prop judge.Proposal, touches func() (paths []string, ok bool, err error)) (callSnapshot, *ToolOutcome, error) {
	session, subagent, callID, tool, def := prop.Session, prop.SubAgentID, prop.CallID, prop.Tool, prop.Def
	var (
		touched []string                // files snapshots: the paths named
		before  *undo.WorkspaceSnapshot // workspace snapshots: the tree to diff
	)
	var refusal string
	var err error
	if def.WorkspaceWide {
		before, refusal, err = p.Chronicle.SnapshotWorkspace(ctx, session, subagent, callID, tool)
	} else {
		paths, ok, terr := touches()
		switch {
		case !ok:
			return callSnapshot{}, &ToolOutcome{Content: "blocked: " + tool + " cannot say what it will change, so no snapshot can be taken", IsError: true}, nil
		case terr != nil:
			return callSnapshot{}, &ToolOutcome{Content: "error: " + terr.Error(), IsError: true}, nil
		}
		refusal, err = p.Chronicle.SnapshotFiles(ctx, session, subagent, callID, tool, paths)
		touched = paths
	}
	if err != nil {
		return callSnapshot{}, nil, err
	}
	if refusal != "" {
		// Nothing runs that could not be undone.
		return callSnapshot{}, &ToolOutcome{Content: "error: no snapshot could be taken, so " + tool + " did not run: " + refusal, IsError: true}, nil
	}
	return callSnapshot{touched: touched, before: before}, nil, nil
}

// execution is what execute ran.
type execution struct {
	res     executor.Result
	durMS   int64
	stopped bool // the scope ended while it ran (or before it started)
	failed  bool // the tool failed (not a command exiting non-zero)
	// interrupted: an agent ran it and never reported its end
	// (HandleExternal).
	interrupted bool
}

// execute runs call with the pipeline's timeout, stopped when its
// ExecScope ends. release must be called once the call's end is
// recorded (ExecScope's done), not before.
func (p *Pipeline) execute(ctx context.Context, tools *executor.Registry, prop judge.Proposal, call executor.Call) (ex execution, release func()) {
	timeout := p.Timeout
	if timeout <= 0 {
		timeout = 2 * time.Minute
	}
	// The executors that act for the calling agent (the agent tools)
	// read the call's proposal from the context. The execution stops
	// when its scope does (a sub-agent ended: cancelled, timed out,
	// failed, the engine stopping): the executor kills the command.
	sctx, stopExec := context.WithCancelCause(withProposal(ctx, prop))
	var scope context.Context
	var done func()
	if p.ExecScope != nil {
		scope, done = p.ExecScope(prop)
	}
	// In Handle's defer order: done first, then the execution's context.
	release = func() {
		if done != nil {
			done()
		}
		stopExec(nil)
	}
	var halted atomic.Bool
	halt := func() { halted.Store(true); stopExec(context.Cause(scope)) }
	unwatch := func() bool { return false }
	if scope != nil {
		if scope.Err() != nil {
			halt() // before anything runs
		} else {
			unwatch = context.AfterFunc(scope, halt)
		}
	}
	xctx, cancel := context.WithTimeout(sctx, timeout)
	start := time.Now()
	res := tools.Execute(xctx, call)
	unwatch()
	cancel()
	dur := time.Since(start).Milliseconds()
	// Stopped: the scope ended while it ran (or before it started).
	stopped := halted.Load()
	if stopped {
		res.Content += "\n(opx: stopped: " + context.Cause(sctx).Error() + ")"
		res.IsError = true
	}
	// The tool failed when it says so without a process's exit status
	// (executor.Result): a command that ran and exited non-zero did not
	// fail as a tool. Decided before opx adds its own notes below.
	failed := res.IsError && res.ExitCode == 0
	return execution{res: res, durMS: dur, stopped: stopped, failed: failed}, release
}

// recordOutcome works out what the call changed, records exec.completed
// (Sync) and a flagged result, restores opx's own configuration if a
// command changed it, and answers what the agent is told.
func (p *Pipeline) recordOutcome(ctx context.Context, prop judge.Proposal, snap callSnapshot, ex execution) (ToolOutcome, error) {
	session, subagent, callID, tool, def := prop.Session, prop.SubAgentID, prop.CallID, prop.Tool, prop.Def
	touched, before := snap.touched, snap.before
	res, dur, stopped, failed := ex.res, ex.durMS, ex.stopped, ex.failed
	var pre []event.FileState
	var diffErr string
	post := []event.PostState{}
	switch {
	case before != nil:
		pr, ps, err := p.Chronicle.Diff(before)
		if err != nil {
			// Recorded as such: a rollback then compares the snapshot's
			// manifest with the workspace instead.
			diffErr = textclip.Cut(err.Error(), 1024)
			res.Content += "\n(opx: what the command changed could not be worked out: " + diffErr + ")"
			res.IsError = true
		} else if n := inlineSize(pr, ps); n > maxInlineChanges {
			// One entry cannot carry them (ledger.MaxLineSize): recorded as
			// a diff that could not be kept, which rollbacks already handle
			// by comparing the snapshot's manifest with the workspace.
			diffErr = fmt.Sprintf("the command changed %d paths: %d bytes of pre- and post-states, more than one entry records (%d)", len(ps), n, maxInlineChanges)
			res.Content += "\n(opx: " + diffErr + ")"
		} else {
			pre, post = pr, ps
		}
	case touched != nil:
		ps, err := chronicle.Post(p.Chronicle.FS(), touched)
		if err != nil {
			res.Content += "\n(opx: post-state not recorded: " + err.Error() + ")"
		} else {
			post = ps
		}
	}
	content, blobHash, blob := event.Inline(res.Content)
	var blobs [][]byte
	if blob != nil {
		blobs = append(blobs, blob)
	}
	exitCode := res.ExitCode
	if exitCode == 0 && res.IsError {
		exitCode = 1
	}
	if _, err := p.Recorder.Record(ctx, ledger.Sync, session, &event.ExecCompleted{SubAgentID: subagent, CallID: callID, Tool: tool,
		Result: content, ResultBlob: blobHash, Size: int64(len(res.Content)), ExitCode: exitCode, Failed: failed, Stopped: stopped, DurationMS: dur, Post: post, Pre: pre, DiffError: diffErr, Interrupted: ex.interrupted}, blobs...); err != nil {
		return ToolOutcome{}, err
	}
	warning, err := p.flagResult(ctx, prop, def, res.Content)
	if err != nil {
		return ToolOutcome{}, err
	}
	if before != nil {
		// No tool may change opx's own configuration; a command can, as
		// the command sandbox grants the workspace whole: undo it now.
		note, err := p.Chronicle.RestoreProtected(ctx, before, pre, diffErr != "")
		if err != nil {
			note = "opx could not restore its configuration: " + err.Error()
		}
		if note != "" {
			res.Content += "\n(" + note + ")"
			res.IsError = true
		}
	}
	if def.Mutating {
		p.Chronicle.Retain(ctx)
	}
	return ToolOutcome{Content: warning + res.Content, IsError: res.IsError}, nil
}

// Decide combines the verdicts of the tiers consulted: any block blocks
// (the first one is reported); otherwise an escalation stands, and the one
// naming the highest tier decides who must answer; otherwise all allowed
// and the last allow is returned. No verdict at all decides nothing
// (Decision ""), which the pipeline treats as a block.
//
// An allow that follows an escalation does not answer it: Shield's tier 1
// allows ("no heuristic matched") after tier 0 escalated, and only tier 2
// or 3 may answer an escalation.
func Decide(vs []judge.Verdict) judge.Verdict {
	var esc, last judge.Verdict
	for _, v := range vs {
		switch v.Decision {
		case event.Block:
			return v
		case event.Escalate:
			if esc.Decision == "" || v.Tier > esc.Tier {
				esc = v
			}
		case event.Allow:
			last = v
		default:
			// An evaluator that says something else has not allowed.
			return judge.Verdict{Decision: event.Block, Tier: v.Tier, Rule: "pipeline:unknown-decision", Reason: "a verdict with decision " + textclip.Cut(v.Decision, 32) + " blocks"}
		}
	}
	if esc.Decision != "" {
		return esc
	}
	return last
}

// escalate finds the answer to an escalation: tier 2 (the LLM evaluator)
// when the escalation names tier 2 and one is configured, a human (tier 3)
// otherwise. Every step is recorded as a verdict through record, so the
// latest verdict before execution is the one that governs it, and a human's
// answer is recorded (approval.resolved) before the verdict that follows
// it. The returned verdict is an allow or a block. The error is non-nil
// only when the ledger failed.
func (p *Pipeline) escalate(ctx context.Context, prop judge.Proposal, esc judge.Verdict, record func(judge.Verdict) error) (judge.Verdict, error) {
	var ask judge.Verdict
	if esc.Tier == 2 {
		if p.Tier2 != nil {
			v, err := p.Tier2.Judge(ctx, prop, esc)
			if err != nil {
				return judge.Verdict{}, err
			}
			if v.Decision != event.Allow && v.Decision != event.Block {
				v = judge.Verdict{Decision: event.Block, Tier: 2, Rule: "tier2:malformed", Reason: "the tier 2 evaluator decided " + textclip.Cut(v.Decision, 32) + "; only allow or block answer an escalation"}
			}
			v.Tier = 2
			return v, record(v)
		}
		ask = judge.Verdict{Decision: event.Escalate, Tier: 3, Rule: "tier2:unconfigured",
			Reason: esc.Rule + ": " + esc.Reason + "; no tier 2 evaluator is configured, so a human (tier 3) must answer"}
	} else {
		ask = judge.Verdict{Decision: event.Escalate, Tier: 3, Rule: "tier3:human", Reason: esc.Rule + ": " + esc.Reason + "; waiting for a human (tier 3)"}
	}
	// The hand-over to a human is itself recorded, so approval.resolved
	// always follows an escalation that names tier 3.
	if err := record(ask); err != nil {
		return judge.Verdict{}, err
	}
	var no judge.Verdict
	switch {
	case p.Approvals == nil:
		no = judge.Verdict{Decision: event.Block, Tier: 3, Rule: "tier3:unavailable", Reason: "no one can approve actions here, so the escalation blocks"}
	}
	if no.Rule != "" {
		return no, record(no)
	}
	var final judge.Verdict
	_, err := p.Approvals.Ask(ctx, prop, ask.Reason, func(o ApprovalOutcome) error {
		final = tier3Verdict(o)
		return record(final)
	})
	if err != nil {
		return judge.Verdict{}, err
	}
	return final, nil
}
