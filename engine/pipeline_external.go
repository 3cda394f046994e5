package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/opx-dev/opx/engine/executor"
	"github.com/opx-dev/opx/engine/judge"
)

// Calls an agent runs itself: a coding agent audited through its hooks
// (engine/hooks) asks before each tool call and reports after it, and the
// pipeline does for it everything but the execution.

// ExternalCall is one opx call of a tool call an agent runs itself.
type ExternalCall struct {
	CallID string
	// Tool and Arguments are the call in opx's vocabulary (a tool of the
	// engine's registry, an MCP tool's mcp__server__tool, or a name of
	// the agent's own): what Shield judges.
	Tool      string
	Arguments string
	// Mutating and WorkspaceWide say what to snapshot before it runs,
	// when the engine's registry does not define Tool (whose definition
	// then wins); Touches are the workspace paths a mutating call that is
	// not workspace-wide changes.
	Mutating, WorkspaceWide bool
	Touches                 []string
	// Unknown, when not empty, says why the call could not be
	// understood: Shield judges it as what it cannot read.
	Unknown []string
}

// ExternalResult is what an agent reported of a call it ran.
type ExternalResult struct {
	Content  string
	ExitCode int
	// Failed: the tool could not do its work (not a command exiting
	// non-zero).
	Failed bool
	// Interrupted: the agent never reported the call's end (killed,
	// interrupted, crashed): Content says how opx closed it.
	Interrupted bool
	// Duration is the run time as the agent reported it; 0 for the time
	// between the start and the report.
	Duration time.Duration
}

// HandleExternal takes the opx calls of one tool call an agent runs
// itself through the pipeline. They are judged in order, each recorded
// as opx's own (tool.proposed, shield.verdict, an escalation waiting for
// tier 2 or a human); the first that may not run refuses the agent's
// call, and those after it are not proposed. When all may run, the
// snapshots of the mutating ones and every exec.started are durable
// before run is called; run lets the agent go ahead and returns what it
// reported; then each call's exec.completed is recorded (the first
// carries the result, with what changed measured from disk). A refusal
// is returned with run never called. The error is non-nil only when the
// ledger failed.
//
// ctx is the asker's: once it ends, a call not yet judged or still
// waiting for the Chronicle's lock is refused and nothing of it starts
// (an escalation's wait is the asker's to end, by denying its approval);
// once run is called, the outcome is recorded whatever ctx does.
func (p *Pipeline) HandleExternal(ctx context.Context, session, messageID string, calls []ExternalCall, run func() ExternalResult) (refusal *ToolOutcome, err error) {
	if len(calls) == 0 {
		return &ToolOutcome{Content: "error: no call to judge", IsError: true}, nil
	}
	if p.replay != nil {
		return &ToolOutcome{Content: "error: an agent's own calls are not re-driven in replay mode", IsError: true}, nil
	}
	rctx := context.WithoutCancel(ctx)
	type pending struct {
		prop  judge.Proposal
		call  executor.Call
		c     ExternalCall
		fk    flightKey
		snap  callSnapshot
		taken bool
	}
	var ps []*pending
	defer func() {
		for _, q := range ps {
			p.end(q.fk)
		}
	}()
	mutating := false
	for _, c := range calls {
		args, perr := parseArgs(c.Arguments)
		if perr != nil {
			return &ToolOutcome{Content: "error: " + perr.Error(), IsError: true}, nil
		}
		fk := flightKey{session, "", c.CallID}
		if !p.begin(fk) {
			return &ToolOutcome{Content: fmt.Sprintf("error: call id %q is already in flight in this session", c.CallID), IsError: true}, nil
		}
		q := &pending{c: c, fk: fk}
		ps = append(ps, q)
		def, known := p.Tools.Def(c.Tool)
		if !known || len(c.Unknown) > 0 {
			def = executor.ToolDef{Name: c.Tool, Mutating: c.Mutating || c.WorkspaceWide, WorkspaceWide: c.WorkspaceWide}
			known = false
		}
		q.call = executor.Call{ID: c.CallID, Tool: c.Tool, Args: args}
		q.prop = judge.Proposal{Session: session, MessageID: messageID, CallID: c.CallID, Tool: c.Tool, Args: args,
			ActionHash: ActionHash(c.Tool, args), Def: def, Known: known, Unknown: c.Unknown}
		if known {
			q.prop.Paths = p.Tools.Paths(q.call)
		}
		p.observe(ctx, &q.prop)
		q.call.Links = q.prop.Links
		if _, r, err := p.recordProposed(rctx, q.prop); err != nil || r != "" {
			return &ToolOutcome{Content: r, IsError: true}, err
		}
		if ctx.Err() != nil {
			return &ToolOutcome{Content: "error: the agent's hook stopped waiting before the call was judged", IsError: true}, nil
		}
		// Judged without ctx: an ended wait must not fail a record (the
		// ledger would count it a failure and stop the engine); the asker
		// ends an escalation's wait by denying its approval.
		if refused, err := p.judge(rctx, q.prop); err != nil || refused != nil {
			if len(calls) > 1 && refused != nil {
				refused.Content = fmt.Sprintf("%s (opx call %d of %d of the agent's call)", refused.Content, len(ps), len(calls))
			}
			return refused, err
		}
		if ActionHash(c.Tool, args) != q.prop.ActionHash {
			return &ToolOutcome{Content: "blocked: the action changed after it was judged", IsError: true}, nil
		}
		mutating = mutating || def.Mutating
	}
	if mutating {
		// One mutation at a time, as for opx's own calls: the changes
		// measured after the agent's run are this call's only.
		if err := p.Chronicle.LockContext(ctx); err != nil {
			return &ToolOutcome{Content: "error: the agent's hook stopped waiting while another change ran: " + err.Error(), IsError: true}, nil
		}
		defer p.Chronicle.Unlock()
	}
	if ctx.Err() != nil {
		return &ToolOutcome{Content: "error: the agent's hook stopped waiting; nothing started", IsError: true}, nil
	}
	for _, q := range ps {
		if !q.prop.Def.Mutating {
			continue
		}
		touches := func() ([]string, bool, error) { return q.c.Touches, true, nil }
		if q.prop.Known {
			// The registry's executors name what their calls change.
			call := q.call
			touches = func() ([]string, bool, error) { return p.Tools.Touches(call) }
		}
		snap, refused, err := p.snapshotWith(rctx, q.prop, touches)
		if err != nil || refused != nil {
			return refused, err
		}
		q.snap, q.taken = snap, true
	}
	for _, q := range ps {
		if r, err := p.recordStarted(rctx, q.prop); err != nil || r != "" {
			return &ToolOutcome{Content: r, IsError: true}, err
		}
	}
	start := time.Now()
	res := run()
	dur := res.Duration
	if dur <= 0 {
		dur = time.Since(start)
	}
	for i, q := range ps {
		r := executor.Result{Content: res.Content, ExitCode: res.ExitCode, IsError: res.Failed || res.ExitCode != 0}
		if i > 0 {
			r = executor.Result{Content: fmt.Sprintf("(opx: part of the agent's call whose result is recorded with %s)", ps[0].c.CallID)}
		}
		ex := execution{res: r, durMS: dur.Milliseconds(), failed: res.Failed && i == 0, interrupted: res.Interrupted}
		if _, err := p.recordOutcome(rctx, q.prop, q.snap, ex); err != nil {
			return nil, err
		}
	}
	return nil, nil
}
