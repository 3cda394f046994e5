package replay

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/opx-dev/opx/chronicle"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// evaluatorRequestPrefix starts the request_id of Shield's tier 2
// evaluator calls (engine/tier2), told apart from the agent's own.
const evaluatorRequestPrefix = "tier2_"

// errFound ends a Range early once an entry was found.
var errFound = errors.New("found")

// Build returns the timeline of session, read from src up to opts.At (or
// the head). It reads every entry up to there once, in seq order: the
// engine run in force and the rollbacks of the session can sit anywhere.
// It returns an error wrapping ErrUnknownSession when the session has no
// entry in that range.
func Build(src Source, session string, opts Options) (*Timeline, error) {
	if session == "" {
		return nil, fmt.Errorf("%w: empty session id", ErrUnknownSession)
	}
	to := ^uint64(0)
	if opts.At != 0 {
		to = opts.At
	}
	b := newBuilder(session)
	if err := rangeFor(src, session, to, b.apply); err != nil {
		return nil, fmt.Errorf("read session %s: %w", session, err)
	}
	if !b.seen {
		return nil, unknownSession(src, session, opts.At)
	}
	t := b.finish()
	if opts.At != 0 {
		t.At = opts.At
	}
	return t, nil
}

type turnKey struct{ subagent, messageID string }
type callKey struct{ subagent, callID string }

// candidate is an engine-wide entry kept if it turns out to fall inside
// the session's span (known only at the end). lo..hi is the seq range it
// is about: its own seq, or for engine.crashed the run that died.
type candidate struct {
	ev     *Event
	lo, hi uint64
}

// builder folds entries into a Timeline.
type builder struct {
	session string
	t       *Timeline
	seen    bool // an entry of the session was read
	spanned bool // FirstSeq is set

	turns     map[turnKey]*Turn
	cur       map[string]*Turn // the latest turn started, by sub-agent ("" the session's agent)
	requests  map[string]*ModelCall
	asked     map[callKey]*ModelCall // latest response naming a call id
	calls     map[callKey]*ToolCall  // latest call of a (sub-agent, call id)
	agentOnly map[callKey]*ToolCall  // agent.tool_call not proposed yet
	subs      map[string]*SubAgent   // the session's sub-agents by id
	// proxyClient is an mcp-proxy session's client, by name.
	proxyClient string
	// agentCalls are a hook session's agent calls by the seq of their
	// hook.tool_call (timeline_hooks.go).
	agentCalls map[uint64]*AgentCall
	// unrecorded are the calls hooks let through while no engine ran
	// (hook.unrecorded), kept at the end if they name the session's
	// agent.
	unrecorded []unrecorded
	// withheldArgs is set by a call of the session's agent whose
	// arguments are withheld (off the record).
	withheldArgs bool
	snaps        map[uint64]*Snapshot // the session's snapshots
	related      map[uint64]bool      // snapshots whose rollback concerns the session
	floating     []*Event             // placed into turns by seq at the end
	cands        []candidate
}

func newBuilder(session string) *builder {
	return &builder{
		session: session,
		t: &Timeline{Session: session, Turns: []*Turn{}, Events: []*Event{}, Snapshots: []*Snapshot{},
			Problems: []string{}, pruned: map[string]uint64{}},
		turns: map[turnKey]*Turn{}, cur: map[string]*Turn{}, requests: map[string]*ModelCall{}, asked: map[callKey]*ModelCall{},
		calls: map[callKey]*ToolCall{}, agentOnly: map[callKey]*ToolCall{}, subs: map[string]*SubAgent{},
		snaps: map[uint64]*Snapshot{}, related: map[uint64]bool{}, agentCalls: map[uint64]*AgentCall{},
	}
}

// engineWide are the types of entries outside any session kept when they
// fall in the session's span.
var engineWide = map[string]bool{
	event.TypeAgentCrashed: true, event.TypeAgentSpawned: true, event.TypeSandboxCanary: true, event.TypeAgentReady: true,
	event.TypeAgentExited: true, event.TypeAgentError: true, event.TypeEngineStarted: true, event.TypeEngineStopped: true,
	event.TypeShutdown: true,
	// The engine's own MCP servers: started, listing their tools, dying
	// or failing to start, sending what is not JSON-RPC, while the
	// session ran.
	event.TypeMCPServerStarted: true, event.TypeMCPToolsListed: true, event.TypeMCPServerExited: true,
	event.TypeMCPServerFailed: true, event.TypeMCPProtocolError: true,
}

func (b *builder) apply(e ledger.Entry) error {
	if e.Session != b.session {
		// Decode only what can concern the session: most of a large
		// ledger is other sessions' entries.
		switch e.Type {
		case event.TypeEngineStarted, event.TypeEngineCrashed, event.TypeRollback, event.TypePruned, event.TypeHookUnrecorded:
		default:
			if e.Session != "" || !b.spanned || !engineWide[e.Type] {
				return nil
			}
		}
	}
	p, derr := event.Decode(e)
	switch {
	case e.Session == b.session:
		b.own(e, p, derr)
	case derr != nil:
		// Another session's or an engine-wide entry that does not decode:
		// nothing of this session can be read from it.
	default:
		b.other(e, p)
	}
	return nil
}

// own folds an entry of the session.
func (b *builder) own(e ledger.Entry, p event.Payload, derr error) {
	b.seen = true
	b.t.read = append(b.t.read, e.Seq)
	if e.Type != event.TypeNote {
		if !b.spanned {
			b.t.FirstSeq, b.t.Start, b.spanned = e.Seq, e.TS, true
		}
		b.t.LastSeq, b.t.End = e.Seq, e.TS
	}
	if derr != nil {
		b.problem(e, derr.Error())
		b.float(e, "unreadable payload: "+derr.Error())
		return
	}
	switch p := p.(type) {
	case *event.SessionCreated:
		b.t.Mode, b.t.ParentSession, b.t.SubAgentID, b.t.CreatedSeq = p.Mode, p.ParentSession, p.SubAgentID, e.Seq
		if p.Title != "" {
			b.t.Title = p.Title
		}
		b.float(e, summarise(e, p))
	case *event.SessionTitled:
		b.t.Title = p.Title
		b.float(e, summarise(e, p))
	case *event.ClientMessage:
		t := b.newTurn(e, "", p.MessageID, p.Content, p.Client)
		t.Hooked = event.HookMode(b.t.Mode)
	case *event.ProcessRequest:
		t := b.turns[turnKey{p.SubAgentID, p.MessageID}]
		if t == nil || t.ProcessSeq != 0 {
			t = b.newTurn(e, p.SubAgentID, p.MessageID, p.Content, "")
		}
		t.ProcessSeq, t.History, t.ToolsOffered = e.Seq, p.History, nonNil(p.Tools)
	case *event.LLMRequest:
		mc := &ModelCall{RequestSeq: e.Seq, TS: e.TS, RequestID: p.RequestID, SubAgentID: p.SubAgentID,
			Evaluator: strings.HasPrefix(p.RequestID, evaluatorRequestPrefix), Provider: p.Provider, Model: p.Model,
			RequestBlob: p.Blob, RequestSize: p.Size, ToolCalls: []event.ToolCall{}}
		b.requests[p.RequestID] = mc
		if t := b.turn(e, p.SubAgentID, p.MessageID); t != nil {
			t.ModelCalls = append(t.ModelCalls, mc)
		}
	case *event.LLMResponse:
		mc := b.requests[p.RequestID]
		if mc == nil {
			// A response whose request is not in the session: keep it,
			// in the turn running.
			mc = &ModelCall{TS: e.TS, RequestID: p.RequestID, SubAgentID: p.SubAgentID,
				Evaluator: strings.HasPrefix(p.RequestID, evaluatorRequestPrefix)}
			b.requests[p.RequestID] = mc
			b.problem(e, fmt.Sprintf("llm.response for request %s, which has no llm.request in the session", p.RequestID))
			if t := b.turn(e, p.SubAgentID, ""); t != nil {
				t.ModelCalls = append(t.ModelCalls, mc)
			}
		}
		mc.ResponseSeq, mc.Provider, mc.Model = e.Seq, p.Provider, p.Model
		mc.ResponseBlob, mc.ResponseSize, mc.Status, mc.Attempts = p.Blob, p.Size, p.Status, p.Attempts
		mc.LatencyMS, mc.FinishReason, mc.Usage, mc.Error, mc.Text = p.LatencyMS, p.FinishReason, p.Usage, p.Error, p.Text
		mc.ToolCalls = nonNil(p.ToolCalls)
		for _, c := range p.ToolCalls {
			b.asked[callKey{p.SubAgentID, c.CallID}] = mc
		}
	case *event.AgentTokens:
		if t := b.turn(e, p.SubAgentID, p.MessageID); t != nil {
			t.Streamed.Entries++
			t.Streamed.Tokens += p.Count
			t.Streamed.text = append(t.Streamed.text, p.Text...)
		}
	case *event.AgentToolCall:
		k := callKey{p.SubAgentID, p.CallID}
		tc := &ToolCall{CallID: p.CallID, SubAgentID: p.SubAgentID, Tool: p.Tool, TS: e.TS,
			AgentSeq: e.Seq, AgentArguments: p.Arguments}
		b.addCall(e, k, p.MessageID, tc)
		b.agentOnly[k] = tc
	case *event.ToolProposed:
		k := callKey{p.SubAgentID, p.CallID}
		tc := b.agentOnly[k]
		delete(b.agentOnly, k)
		if tc == nil {
			tc = &ToolCall{CallID: p.CallID, SubAgentID: p.SubAgentID}
			mid := p.MessageID
			if mid == "" && b.t.Mode == modeMCPProxy {
				mid = p.CallID // the turn of the client's tools/call (timeline_proxy.go)
			}
			b.addCall(e, k, mid, tc)
		}
		tc.Seq, tc.TS, tc.Tool, tc.Arguments, tc.ActionHash, tc.Mutating = e.Seq, e.TS, p.Tool, p.Arguments, p.ActionHash, p.Mutating
		if p.SubAgentID == "" {
			b.parentCall(tc)
			b.hookProposed(tc)
		}
	case *event.ShieldVerdict:
		if tc := b.call(e, p.SubAgentID, p.CallID); tc != nil {
			tc.Verdicts = append(tc.Verdicts, &Verdict{Seq: e.Seq, Decision: p.Decision, Tier: p.Tier, Rule: p.Rule,
				Reason: p.Reason, PolicyHash: p.PolicyHash})
		}
	case *event.ApprovalRequested:
		if tc := b.call(e, p.SubAgentID, p.CallID); tc != nil {
			tc.Approval = &Approval{ApprovalID: p.ApprovalID, SubAgentID: p.SubAgentID, RequestedSeq: e.Seq, Reason: p.Reason,
				TimeoutMS: p.TimeoutMS, requestedTS: e.TS}
		}
	case *event.ApprovalResolved:
		if tc := b.call(e, p.SubAgentID, p.CallID); tc != nil {
			if tc.Approval == nil {
				tc.Approval = &Approval{ApprovalID: p.ApprovalID, SubAgentID: p.SubAgentID}
			}
			a := tc.Approval
			a.ResolvedSeq, a.Approved, a.By, a.ResolveReason = e.Seq, p.Approved, p.By, p.Reason
			if a.requestedTS != "" {
				a.WaitedMS = msBetween(a.requestedTS, e.TS)
			}
		}
	case *event.Snapshot:
		s := &Snapshot{Seq: e.Seq, TS: e.TS, CallID: p.CallID, Tool: p.Tool, Kind: p.Kind, Files: nonNil(p.Files),
			ManifestBlob: p.ManifestBlob, Entries: p.Entries, RestoredBy: []uint64{}}
		if p.Kind == event.KindFiles {
			for _, f := range p.Files {
				s.Paths = append(s.Paths, f.Path)
			}
		}
		b.t.Snapshots = append(b.t.Snapshots, s)
		b.snaps[e.Seq], b.related[e.Seq] = s, true
		if tc := b.calls[callKey{p.SubAgentID, p.CallID}]; tc != nil && tc.Seq != 0 {
			tc.Snapshot = s
		} else if !b.subEvent(e, p) {
			b.float(e, summarise(e, p))
		}
	case *event.ExecStarted:
		if tc := b.call(e, p.SubAgentID, p.CallID); tc != nil {
			tc.Exec = &Execution{StartedSeq: e.Seq, Status: "running", Post: []event.PostState{}, Changed: []string{}}
		}
	case *event.ExecCompleted:
		if tc := b.call(e, p.SubAgentID, p.CallID); tc != nil {
			x := b.exec(tc)
			x.EndSeq, x.Status, x.Result, x.ResultBlob, x.Size = e.Seq, p.Outcome(), p.Result, p.ResultBlob, p.Size
			x.ExitCode, x.DurationMS, x.Pre, x.Post, x.DiffError = p.ExitCode, p.DurationMS, p.Pre, nonNil(p.Post), p.DiffError
			x.Interrupted = p.Interrupted
			x.Changed = changed(tc.Snapshot, p)
			if s := tc.Snapshot; s != nil && s.Kind == event.KindWorkspace {
				for _, f := range p.Pre {
					s.Paths = append(s.Paths, f.Path)
				}
			}
		}
	case *event.ExecFailed:
		if tc := b.call(e, p.SubAgentID, p.CallID); tc != nil {
			x := b.exec(tc)
			x.EndSeq, x.Status, x.Error, x.DurationMS = e.Seq, event.ExecError, p.Error, p.DurationMS
		}
	case *event.ResultFlagged:
		if tc := b.call(e, p.SubAgentID, p.CallID); tc != nil {
			tc.Flagged = &Flag{Seq: e.Seq, Rule: p.Rule, Reason: p.Reason, Action: p.Action}
		}
	case *event.ToolResult:
		if tc := b.call(e, p.SubAgentID, p.CallID); tc != nil {
			tc.Result = &Delivery{Seq: e.Seq, Content: p.Content, Blob: p.Blob, Size: p.Size, IsError: p.IsError}
			if p.SubAgentID == "" {
				b.collected(e, tc)
			}
		}
	case *event.ResponseComplete:
		if t := b.turn(e, p.SubAgentID, p.MessageID); t != nil && t.Response == nil {
			t.Response = &Response{Seq: e.Seq, TS: e.TS, Content: p.Content, Thoughts: nonNil(p.Thoughts), Usage: p.Usage}
			t.EndSeq, t.EndTS = e.Seq, e.TS // the answer ends a turn, even after an error
		}
	case *event.AgentError:
		// The agent's error about a message ends its turn; the engine's
		// note of an event it refused names no message and ends nothing.
		t := b.turns[turnKey{p.SubAgentID, p.MessageID}]
		if cur := b.cur[p.SubAgentID]; p.MessageID == "" && cur != nil && cur.EndSeq == 0 {
			t = cur
		}
		if t == nil {
			if !b.subEvent(e, p) {
				b.float(e, summarise(e, p))
			}
			return
		}
		t.Errors = append(t.Errors, &AgentErr{Seq: e.Seq, TS: e.TS, Code: p.Code, Message: p.Message})
		if t.EndSeq == 0 && p.MessageID != "" {
			t.EndSeq, t.EndTS = e.Seq, e.TS
		}
	case *event.Rollback:
		b.rollback(e, p)
	case *event.Pruned:
		b.pruned(e, p, true)
	case *event.MCPClient, *event.MCPRequest, *event.MCPResponse:
		if !b.proxy(e, p) {
			b.float(e, summarise(e, p))
		}
	case *event.HookSession, *event.HookToolCall, *event.HookEvent, *event.HookTranscript:
		if !b.hook(e, p) {
			b.float(e, summarise(e, p))
		}
	case *event.SubAgentSpawned:
		b.spawn(e, p)
	case *event.SubAgentCompleted, *event.SubAgentFailed, *event.SubAgentCancelled, *event.SubAgentTimedOut:
		b.end(e, p)
	default:
		if !b.subEvent(e, p) {
			b.float(e, summarise(e, p))
		}
	}
}

// other folds an entry of another session or of none: engine-wide events
// kept if they fall in the session's span, rollbacks and prunes of its
// snapshots, and the engine run in force.
func (b *builder) other(e ledger.Entry, p event.Payload) {
	switch p := p.(type) {
	case *event.EngineStarted:
		if !b.spanned {
			b.t.Engine = &EngineRun{Seq: e.Seq, TS: e.TS, EngineStarted: *p}
		}
	case *event.Rollback:
		b.rollback(e, p)
		return
	case *event.Pruned:
		b.pruned(e, p, false)
		return
	case *event.EngineCrashed:
		b.cands = append(b.cands, candidate{ev: b.event(e, summarise(e, p)), lo: p.StartedSeq, hi: p.LastSeq})
		return
	case *event.HookUnrecorded:
		if e.Session == "" {
			b.unrecorded = append(b.unrecorded, unrecorded{ev: b.event(e, summarise(e, p)), p: p})
		}
		return
	}
	if e.Session == "" && b.spanned && engineWide[e.Type] {
		// A sub-agent's process belongs to its session alone.
		if id := subagentOf(e); id != "" {
			if b.subEvent(e, p) {
				b.t.read = append(b.t.read, e.Seq)
			}
			return
		}
		b.cands = append(b.cands, candidate{ev: b.event(e, summarise(e, p)), lo: e.Seq, hi: e.Seq})
	}
}

// rollback keeps a rollback of the session, of one of its snapshots, or of
// a snapshot such a rollback took.
func (b *builder) rollback(e ledger.Entry, p *event.Rollback) {
	if p.Session != b.session && !b.related[p.Snapshot] {
		return
	}
	if e.Session != b.session {
		b.t.read = append(b.t.read, e.Seq)
	}
	b.related[p.PreSnapshot] = true
	for _, s := range b.t.Snapshots {
		if s.Seq == p.Snapshot || p.Session == b.session {
			s.RestoredBy = append(s.RestoredBy, e.Seq)
		}
	}
	b.float(e, summarise(e, p))
}

// pruned records removed blobs (Changes explains missing content with
// them) and keeps the entry when it retired the session's content.
func (b *builder) pruned(e ledger.Entry, p *event.Pruned, own bool) {
	if !own {
		b.t.read = append(b.t.read, e.Seq) // its blobs explain missing content
	}
	for _, h := range p.Blobs {
		b.t.pruned[h] = e.Seq
	}
	hit := own
	for _, seq := range p.Snapshots {
		if s := b.snaps[seq]; s != nil {
			hit = true
			if s.PrunedBy == 0 {
				s.PrunedBy = e.Seq
			}
		}
	}
	for _, s := range b.t.Snapshots {
		for _, f := range s.Files {
			if _, gone := b.t.pruned[f.Blob]; gone && f.Blob != "" && s.PrunedBy == 0 {
				s.PrunedBy, hit = e.Seq, true
			}
		}
	}
	if hit {
		b.float(e, summarise(e, p))
	}
}

func (b *builder) newTurn(e ledger.Entry, subagent, messageID, content, client string) *Turn {
	t := &Turn{MessageID: messageID, SubAgentID: subagent, Seq: e.Seq, TS: e.TS, Client: client, Content: content,
		ToolsOffered: []string{}, ModelCalls: []*ModelCall{}, ToolCalls: []*ToolCall{}, Errors: []*AgentErr{}, Events: []*Event{}}
	if sa := b.subs[subagent]; sa != nil {
		sa.Turns = append(sa.Turns, t)
	} else {
		if subagent != "" {
			b.problem(e, fmt.Sprintf("%s of sub-agent %s, which was never spawned in the session", e.Type, subagent))
		}
		b.t.Turns = append(b.t.Turns, t)
		t.N = len(b.t.Turns)
	}
	b.turns[turnKey{subagent, messageID}] = t
	b.cur[subagent] = t
	return t
}

// turn finds the turn of a message, or, for an entry naming none, the
// turn running. It records a problem when there is neither.
func (b *builder) turn(e ledger.Entry, subagent, messageID string) *Turn {
	if messageID != "" {
		if t := b.turns[turnKey{subagent, messageID}]; t != nil {
			return t
		}
	}
	if cur := b.cur[subagent]; cur != nil {
		return cur
	}
	b.problem(e, fmt.Sprintf("%s before any message of the session", e.Type))
	return nil
}

func (b *builder) addCall(e ledger.Entry, k callKey, messageID string, tc *ToolCall) {
	if mc := b.asked[k]; mc != nil {
		tc.AskedBy = mc.ResponseSeq
	}
	tc.Verdicts = []*Verdict{}
	b.calls[k] = tc
	if t := b.turn(e, k.subagent, messageID); t != nil {
		t.ToolCalls = append(t.ToolCalls, tc)
	}
}

// call finds the tool call an entry is about, by sub-agent and id: a
// sub-agent's entry is never about its parent's or a sibling's call of
// the same id.
func (b *builder) call(e ledger.Entry, subagent, callID string) *ToolCall {
	if tc := b.calls[callKey{subagent, callID}]; tc != nil {
		return tc
	}
	b.problem(e, fmt.Sprintf("%s for call %s, which was never proposed in the session", e.Type, callID))
	b.float(e, fmt.Sprintf("%s for unknown call %s", e.Type, callID))
	return nil
}

func (b *builder) exec(tc *ToolCall) *Execution {
	if tc.Exec == nil {
		tc.Exec = &Execution{Post: []event.PostState{}, Changed: []string{}}
	}
	return tc.Exec
}

// changed returns the paths a call changed, as chronicle.Snapshot.Changed
// tells them: for a files snapshot the recorded paths whose post-state
// differs from their pre-state, for a workspace snapshot what the diff
// found. A call without a snapshot changed nothing on record.
func changed(s *Snapshot, p *event.ExecCompleted) []string {
	switch {
	case s == nil || p.DiffError != "":
		return []string{}
	case s.Kind == event.KindWorkspace:
		out := []string{}
		for _, f := range p.Pre {
			out = append(out, f.Path)
		}
		sort.Strings(out)
		return out
	}
	pre := make([]event.PostState, 0, len(s.Files))
	for _, f := range s.Files {
		pre = append(pre, chronicle.PostOf(f))
	}
	return nonNil(chronicle.ChangedPaths(pre, p.Post))
}

func (b *builder) event(e ledger.Entry, summary string) *Event {
	return &Event{Seq: e.Seq, TS: e.TS, Type: e.Type, Session: e.Session, Summary: summary, Data: json.RawMessage(e.Data)}
}

func (b *builder) float(e ledger.Entry, summary string) {
	b.floating = append(b.floating, b.event(e, summary))
}

func (b *builder) problem(e ledger.Entry, msg string) {
	b.t.Problems = append(b.t.Problems, fmt.Sprintf("seq %d: %s", e.Seq, msg))
}
