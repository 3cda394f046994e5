package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/opx-dev/opx/agents/hookproto"
	"github.com/opx-dev/opx/agents/toolmap"
	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/engine/config"
	"github.com/opx-dev/opx/internal/textclip"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// call is one tool call of an agent that opx allowed, from its pre-tool
// event to its end.
type call struct {
	toolUseID string
	ids       []string
	// allowed is closed when the agent may run it (its start durable);
	// done once its pipeline run returned (its end recorded, or its
	// refusal).
	allowed, done chan struct{}
	// result takes the agent's report (the post-tool event) or an
	// interruption, once.
	result  chan engine.ExternalResult
	once    sync.Once
	refusal *engine.ToolOutcome
	err     error
	// asked is set when an escalation was handed to the CLI's own
	// permission prompt (hooks.escalation: ask): the answer is ask.
	asked     atomic.Bool
	askReason string // set before asked
}

// report hands the call its end; false when it had one already.
func (c *call) report(r engine.ExternalResult) bool {
	sent := false
	c.once.Do(func() {
		c.result <- r
		sent = true
	})
	return sent
}

// interrupt ends the call as interrupted, saying why.
func (c *call) interrupt(why string) {
	c.report(engine.ExternalResult{Content: "(opx: " + why + "; what the workspace holds now is recorded as its outcome)", Interrupted: true})
}

// preTool judges a tool call before the agent runs it, and answers
// allow only once the call may run and its start is durable.
func (h *sessions) preTool(ctx context.Context, s *session, ev *hookproto.Event, reply *opxv1.HookEventReply, deadline time.Duration) (*opxv1.HookEventReply, error) {
	e := h.e
	ws := e.Options().Workspace
	deny := func(why string) (*opxv1.HookEventReply, error) {
		reply.Decision, reply.Reason = string(hookproto.Deny), textclip.Cut(why, hookproto.MaxReasonBytes)
		// The answer the agent got, as engine.tool_result is for opx's
		// own agent: durable before the hook hears it (a denial after an
		// allowing verdict, the hook gone, a lock not had in time, has no
		// other record).
		if h.record(ctx, ledger.Sync, s.id, &event.HookEvent{Name: ev.Name, Kind: string(ev.Kind), ToolUseID: ev.ToolUseID, AgentTool: ev.Tool,
			Detail: "denied: " + textclip.Cut(why, 1024)}, "") == 0 {
			return nil, status.Error(codes.Internal, "opx: the ledger failed; nothing more is recorded")
		}
		return reply, nil
	}
	s.mu.Lock()
	_, dup := s.open[ev.ToolUseID]
	n := len(s.open)
	s.mu.Unlock()
	switch {
	case dup:
		return deny(fmt.Sprintf("opx: the tool call %s is already running in this session; a call id names one call", ev.ToolUseID))
	case n >= MaxOpenCalls:
		return deny(fmt.Sprintf("opx: %d tool calls of this session are running, the most opx follows at once", n))
	}
	m := toolmap.Map(s.agent, ev.Tool, ev.ToolInput, ws, ev.Cwd)
	cfg := h.config()
	var updated json.RawMessage
	if cfg.SandboxCommands {
		// What Shield judges is the command as the agent wrote it; what
		// runs is the same inside the sandbox.
		updated, _ = h.sandboxed(m, ev.ToolInput)
	}
	inline, blobHash, blob := event.Inline(string(ev.ToolInput))
	var blobs [][]byte
	if blob != nil {
		blobs = append(blobs, blob)
	}
	seq := e.Record(ctx, ledger.Async, s.id, &event.HookToolCall{ToolUseID: ev.ToolUseID, ToolUseIDDerived: ev.ToolUseIDDerived,
		AgentTool: ev.Tool, Input: inline, InputBlob: blobHash, InputSize: int64(len(ev.ToolInput)), Kind: string(m.Kind),
		Calls: len(m.Calls), Unknown: clipAll(m.Unknown), TurnID: ev.TurnID, Model: ev.Model, Sandboxed: updated != nil}, blobs...)
	if seq == 0 {
		return nil, status.Error(codes.Internal, "opx: the ledger failed; nothing more is recorded")
	}
	calls := make([]engine.ExternalCall, len(m.Calls))
	touches := append(append([]string(nil), m.Writes...), m.Deletes...)
	for i, mc := range m.Calls {
		calls[i] = engine.ExternalCall{CallID: event.HookCallID(seq, i), Tool: mc.Tool, Arguments: string(mc.Args),
			Mutating: m.Mutating, WorkspaceWide: m.WorkspaceWide, Touches: touches, Unknown: m.Unknown}
		reply.CallIds = append(reply.CallIds, calls[i].CallID)
	}
	c := &call{toolUseID: ev.ToolUseID, ids: reply.CallIds, allowed: make(chan struct{}), done: make(chan struct{}),
		result: make(chan engine.ExternalResult, 1)}
	s.mu.Lock()
	_, dup = s.open[ev.ToolUseID]
	if !dup {
		s.open[ev.ToolUseID] = c
	}
	s.mu.Unlock()
	if dup {
		// Asked twice at once: the first holds the id.
		return deny(fmt.Sprintf("opx: the tool call %s is already running in this session; a call id names one call", ev.ToolUseID))
	}
	if deadline <= 0 || deadline > time.Duration(cfg.DecisionTimeout) {
		deadline = time.Duration(cfg.DecisionTimeout)
	}
	// The hook's wait: judging (an escalation waiting for a human
	// included) and the Chronicle's lock end with it.
	jctx, cancel := context.WithTimeoutCause(ctx, deadline, fmt.Errorf("no decision within %s (hooks.decision_timeout)", deadline))
	defer cancel()
	messageID := ev.PromptID
	if messageID == "" {
		messageID = ev.TurnID
	}
	toolTimeout := time.Duration(cfg.ToolTimeout)
	// The call's approvals: handed to the CLI's prompt (ask), or denied
	// once the hook stops waiting.
	sub := e.Subscribe(s.id)
	defer sub.Close()
	ask := cfg.Escalation == config.HooksAsk && (s.agent == hookproto.Claude || s.agent == hookproto.Codex)
	go h.watchApprovals(jctx, s, c, sub, ask)
	h.running.Add(1)
	go func() {
		defer h.running.Done()
		defer func() {
			s.mu.Lock()
			delete(s.open, ev.ToolUseID)
			s.mu.Unlock()
			close(c.done)
		}()
		c.refusal, c.err = e.Pipeline().HandleExternal(jctx, s.id, messageID, calls, func() engine.ExternalResult {
			if why := h.isClosed(); why != "" {
				return engine.ExternalResult{Content: "(opx: not run: the engine stopped before the agent was answered: " + why + ")", Interrupted: true}
			}
			if jctx.Err() != nil {
				return engine.ExternalResult{Content: "(opx: not run: the agent's hook stopped waiting before it was answered)", Interrupted: true}
			}
			close(c.allowed)
			t := time.NewTimer(toolTimeout)
			defer t.Stop()
			select {
			case r := <-c.result:
				return r
			case <-t.C:
				c.interrupt(fmt.Sprintf("the agent did not report the end of this call within %s (hooks.tool_timeout)", toolTimeout))
				return <-c.result
			}
		})
		if c.err != nil {
			e.Fatal(c.err)
		}
	}()
	select {
	case <-c.allowed:
		reply.UpdatedInput = updated
		if c.asked.Load() {
			reply.Decision = string(hookproto.Ask)
			reply.Reason = "opx Shield asks a human about this call (hooks.escalation: ask): " + c.askReason
		}
		return reply, nil
	case <-c.done:
		if c.err != nil {
			return nil, status.Error(codes.Internal, "opx: the ledger failed; nothing more is recorded")
		}
		if c.refusal == nil {
			// Run but never allowed: the engine stopped meanwhile.
			return deny("opx: the engine stopped before the call was allowed")
		}
		return deny("opx: " + c.refusal.Content)
	}
}

// watchApprovals follows the approvals of c's calls as they are asked.
// With ask it hands each to the CLI's own permission prompt
// (hooks.escalation: ask): the approval is resolved as handed over and
// the hook answers ask; whether the user allowed the call shows in
// whether the agent reports its end (one it never reports is closed as
// interrupted). Otherwise, once the hook stops waiting (wait ends: its
// deadline, or it went away), each one still pending is denied, which
// ends the call's judging.
func (h *sessions) watchApprovals(wait context.Context, s *session, c *call, sub *engine.Subscription, ask bool) {
	var pending []string
	for {
		select {
		case ev, ok := <-sub.C:
			if !ok {
				return
			}
			if ev.Type != "approval_requested" {
				continue
			}
			var d struct {
				ApprovalID string `json:"approval_id"`
				CallID     string `json:"call_id"`
				Reason     string `json:"reason"`
			}
			if json.Unmarshal(ev.Data, &d) != nil || !slices.Contains(c.ids, d.CallID) {
				continue
			}
			if !ask {
				pending = append(pending, d.ApprovalID)
				continue
			}
			c.askReason = textclip.Cut(d.Reason, 1024)
			c.asked.Store(true)
			by := agentNames[s.agent] + "'s own permission prompt (hooks.escalation: ask)"
			h.resolve(d.ApprovalID, true, by, "handed to the user at the agent's prompt; the call ran only if it reported an end")
		case <-wait.Done():
			for _, id := range pending {
				h.resolve(id, false, "opx hook", "the agent's hook stopped waiting: "+textclip.Cut(context.Cause(wait).Error(), 256))
			}
			return
		}
	}
}

// resolve answers an approval, unless it was answered meanwhile.
func (h *sessions) resolve(id string, approved bool, by, reason string) {
	if _, err := h.e.Approvals().Resolve(id, approved, by, reason); err != nil && !errors.Is(err, engine.ErrUnknownApproval) {
		h.e.Fatal(err)
	}
}

// postTool completes an allowed call with the agent's report of it, and
// answers once its end is durable.
func (h *sessions) postTool(ctx context.Context, s *session, ev *hookproto.Event, reply *opxv1.HookEventReply) (*opxv1.HookEventReply, error) {
	s.mu.Lock()
	c := s.open[ev.ToolUseID]
	s.mu.Unlock()
	text := responseText(ev)
	if c == nil || !c.report(engine.ExternalResult{Content: text, ExitCode: exitCode(ev), Failed: ev.Failed, Interrupted: ev.Interrupted,
		Duration: ev.Duration}) {
		// No open call: one opx did not allow (the CLI ran it anyway?),
		// closed already (interrupted, its engine restarted), or never
		// asked about.
		h.record(ctx, ledger.Sync, s.id, &event.HookEvent{Name: ev.Name, Kind: string(ev.Kind), ToolUseID: ev.ToolUseID, AgentTool: ev.Tool,
			Detail: "the agent reported the end of a tool call opx has no open record of (not allowed by opx, closed already, or never asked about)"}, text)
		return reply, nil
	}
	reply.CallIds = c.ids
	select {
	case <-c.done:
	case <-ctx.Done():
		return nil, status.FromContextError(ctx.Err()).Err()
	}
	if c.err != nil {
		return nil, status.Error(codes.Internal, "opx: the ledger failed; nothing more is recorded")
	}
	return reply, nil
}

// responseText is the tool's response as recorded: verbatim when it is
// text, its JSON otherwise; cut past hookproto.MaxToolResponse (the
// record says so).
func responseText(ev *hookproto.Event) string {
	switch {
	case ev.ToolResponseTruncated:
		return ev.ToolResponseText + fmt.Sprintf("\n[opx: the tool's response was %d bytes; only its start is kept]", ev.ToolResponseBytes)
	case len(ev.ToolResponse) == 0:
		if ev.Error != "" {
			return ev.Error
		}
		return ""
	}
	var s string
	if json.Unmarshal(ev.ToolResponse, &s) == nil {
		return s
	}
	return string(ev.ToolResponse)
}

// exitCode is the exit status the agent reported, where it says one.
func exitCode(ev *hookproto.Event) int {
	var r struct {
		ExitCode *int `json:"exit_code"`
		Code     *int `json:"exitCode"`
	}
	if json.Unmarshal(ev.ToolResponse, &r) == nil {
		if r.ExitCode != nil {
			return *r.ExitCode
		}
		if r.Code != nil {
			return *r.Code
		}
	}
	if ev.Failed {
		return 1
	}
	return 0
}

func clipAll(ss []string) []string {
	out := make([]string, 0, len(ss))
	for _, s := range ss {
		out = append(out, textclip.Cut(s, 512))
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// isClosed says why no more calls run ("" while they do).
func (h *sessions) isClosed() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.closed
}

// Stop closes every open call as interrupted and opens no more
// (engine.Hooks); it returns once their ends are recorded, or after a
// bound.
func (h *sessions) Stop(reason string) {
	h.mu.Lock()
	if h.closed == "" {
		h.closed = reason
	}
	all := make([]*session, 0, len(h.byID))
	for _, s := range h.byID {
		all = append(all, s)
	}
	h.mu.Unlock()
	h.pids.close()
	for _, s := range all {
		s.mu.Lock()
		for _, c := range s.open {
			c.interrupt("the engine stopped (" + textclip.Cut(reason, 256) + ") while the agent ran this call")
		}
		s.mu.Unlock()
	}
	done := make(chan struct{})
	go func() { h.running.Wait(); close(done) }()
	t := time.NewTimer(15 * time.Second)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		h.e.Logf("engine: hooks: calls still being judged at stop; their hooks are answered deny")
	}
}
