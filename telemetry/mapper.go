package telemetry

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// Bounds on what one attribute may hold.
const (
	// MaxContent bounds a content attribute (arguments, results, text).
	MaxContent = 8 << 10
	// MaxString bounds any other string attribute (names, rules, reasons).
	MaxString = 1 << 10
	// DefaultMaxOpen is Options.MaxOpen's default.
	DefaultMaxOpen = 10000
)

// Options tune a Mapper.
type Options struct {
	// LedgerID is the ledger's id, in every span and in every id.
	LedgerID string
	// Content attaches arguments, results and messages (never for an
	// off-the-record session or a withheld value).
	Content bool
	// MaxOpen bounds the spans held open (DefaultMaxOpen when 0).
	MaxOpen int
}

// Mapper folds ledger entries, in seq order, into spans it starts and
// ends on a tracer whose provider uses this package's id generator
// (NewProvider). It is not safe for concurrent use.
type Mapper struct {
	tr   trace.Tracer
	opts Options

	sessions map[string]*sessionState
	open     int
	curSeq   uint64 // the entry being applied, and its hash (hashed once)
	curHash  string
	provider string // of the engine run in force
	model    string
	servers  map[string]int // MCP server -> instance last started

	// Spans counts the spans started, Events the events added, Truncated
	// the spans ended at once because MaxOpen was reached, Skipped the
	// entries whose payload did not decode.
	Spans, Events, Truncated, Skipped uint64
}

type callKey struct{ subagent, callID string }

type sessionState struct {
	otr   bool
	proxy bool
	turns map[string]*openSpan // by sub-agent ("" the session's agent)
	model map[string]*openSpan // by request id
	calls map[callKey]*openSpan
	subs  map[string]*openSpan // sub-agents by id
	mcp   map[string]*openSpan // an mcp-proxy session's requests by id
}

type openSpan struct {
	s        trace.Span
	sc       trace.SpanContext
	enforced string
	errType  string
	last     time.Time
}

// NewMapper returns a Mapper starting spans on tr.
func NewMapper(tr trace.Tracer, opts Options) *Mapper {
	if opts.MaxOpen <= 0 {
		opts.MaxOpen = DefaultMaxOpen
	}
	return &Mapper{tr: tr, opts: opts, sessions: map[string]*sessionState{}, servers: map[string]int{}}
}

// maxSessions bounds the sessions whose state is kept; past it, the
// sessions with nothing open are forgotten (an off-the-record session
// forgotten stays withheld: its recorded content is in withheld form,
// which is never exported).
const maxSessions = 4096

func (m *Mapper) session(id string) *sessionState {
	s := m.sessions[id]
	if s == nil {
		if len(m.sessions) >= maxSessions {
			for k, v := range m.sessions {
				if len(v.turns)+len(v.model)+len(v.calls)+len(v.subs)+len(v.mcp) == 0 {
					delete(m.sessions, k)
				}
			}
		}
		s = &sessionState{turns: map[string]*openSpan{}, model: map[string]*openSpan{}, calls: map[callKey]*openSpan{},
			subs: map[string]*openSpan{}, mcp: map[string]*openSpan{}}
		m.sessions[id] = s
	}
	return s
}

// ledgerAttrs are the opx.ledger.* attributes of e.
func (m *Mapper) ledgerAttrs(e *ledger.Entry, kv ...attribute.KeyValue) []attribute.KeyValue {
	return append(kv, attribute.String("opx.ledger.id", m.opts.LedgerID), attribute.Int64("opx.ledger.seq", int64(e.Seq)),
		attribute.String("opx.ledger.hash", m.hashOf(e)), attribute.String("opx.entry.type", e.Type))
}

// hashOf is e's hash in hex, computed once per entry applied.
func (m *Mapper) hashOf(e *ledger.Entry) string {
	if m.curHash == "" || m.curSeq != e.Seq {
		m.curSeq, m.curHash = e.Seq, e.Hash().String()
	}
	return m.curHash
}

// entryTime is e's timestamp (the zero time for one that does not parse:
// the entry is still mapped).
func entryTime(e *ledger.Entry) time.Time {
	t, err := e.Time()
	if err != nil {
		return time.Unix(0, 0).UTC()
	}
	return t
}

// start opens a span for e: a new trace when parent is invalid.
func (m *Mapper) start(e *ledger.Entry, parent trace.SpanContext, name string, kind trace.SpanKind, kv ...attribute.KeyValue) *openSpan {
	ts := entryTime(e)
	want := wantIDs{span: SpanID(m.opts.LedgerID, e.Session, e.Seq)}
	ctx := context.Background()
	if parent.IsValid() {
		want.trace = parent.TraceID()
		ctx = trace.ContextWithRemoteSpanContext(ctx, parent)
	} else {
		want.trace = TraceID(m.opts.LedgerID, e.Session, e.Seq)
	}
	ctx = context.WithValue(ctx, idKey{}, want)
	attrs := m.ledgerAttrs(e, append(kv, attribute.String("gen_ai.conversation.id", clean(e.Session, MaxString)))...)
	_, s := m.tr.Start(ctx, name, trace.WithTimestamp(ts), trace.WithSpanKind(kind), trace.WithAttributes(attrs...))
	m.Spans++
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: want.trace, SpanID: want.span, TraceFlags: trace.FlagsSampled})
	if m.open >= m.opts.MaxOpen {
		s.SetAttributes(attribute.Bool("opx.truncated", true))
		s.End(trace.WithTimestamp(ts))
		m.Truncated++
		return nil // nothing is held for it: the maps stay bounded
	}
	o := &openSpan{s: s, sc: sc, last: ts}
	m.open++
	return o
}

// end closes o at e (nil: at its last time, still open in the ledger).
func (m *Mapper) end(o *openSpan, e *ledger.Entry, kv ...attribute.KeyValue) {
	if o == nil || o.s == nil {
		return
	}
	ts := o.last
	if e != nil {
		ts = entryTime(e)
		kv = append(kv, attribute.Int64("opx.ledger.end_seq", int64(e.Seq)), attribute.String("opx.ledger.end_hash", m.hashOf(e)))
	} else {
		kv = append(kv, attribute.Bool("opx.open", true))
	}
	if o.enforced != "" {
		kv = append(kv, attribute.String("opx.enforced", o.enforced))
	}
	if o.errType != "" {
		kv = append(kv, attribute.String("error.type", o.errType))
		o.s.SetStatus(codes.Error, o.errType)
	}
	o.s.SetAttributes(kv...)
	if ts.Before(o.last) {
		ts = o.last
	}
	o.s.End(trace.WithTimestamp(ts))
	o.s = nil
	m.open--
}

// event adds e as an event of o.
func (m *Mapper) event(o *openSpan, e *ledger.Entry, name string, kv ...attribute.KeyValue) {
	if o == nil || o.s == nil {
		return
	}
	ts := entryTime(e)
	if ts.After(o.last) {
		o.last = ts
	}
	o.s.AddEvent(name, trace.WithTimestamp(ts), trace.WithAttributes(m.ledgerAttrs(e, kv...)...))
	m.Events++
}

// content returns the attribute k=v when content is on for s and v is
// not withheld; ok false otherwise.
func (m *Mapper) content(s *sessionState, k, v string) (attribute.KeyValue, bool) {
	if !m.opts.Content || s.otr || v == "" {
		return attribute.KeyValue{}, false
	}
	if _, withheld := event.Withheld(v); withheld {
		return attribute.KeyValue{}, false
	}
	return attribute.String(k, cleanContent(v, MaxContent)), true
}

func (m *Mapper) addContent(s *sessionState, o *openSpan, k, v string) {
	if o == nil || o.s == nil {
		return
	}
	if kv, ok := m.content(s, k, v); ok {
		o.s.SetAttributes(kv)
	}
}

// messages is the GenAI conventions' message list of one text part.
func messages(role, text string) string {
	b, _ := json.Marshal([]map[string]any{{"role": role, "parts": []map[string]string{{"type": "text", "content": text}}}})
	return string(b)
}

// Apply maps one entry. Entries must come in seq order.
func (m *Mapper) Apply(e ledger.Entry) {
	switch e.Type {
	case event.TypeSessionCreated, event.TypeEngineStarted, event.TypeMCPServerStarted, event.TypeClientMessage,
		event.TypeProcessRequest, event.TypeResponseComplete, event.TypeAgentError, event.TypeLLMRequest, event.TypeLLMResponse,
		event.TypeToolProposed, event.TypeShieldVerdict, event.TypeApprovalRequested, event.TypeApprovalResolved,
		event.TypeSnapshot, event.TypeExecStarted, event.TypeExecCompleted, event.TypeExecFailed, event.TypeResultFlagged,
		event.TypeToolResult, event.TypeSubAgentSpawned, event.TypeSubAgentCompleted, event.TypeSubAgentFailed,
		event.TypeSubAgentCancelled, event.TypeSubAgentTimedOut, event.TypeMCPRequest, event.TypeMCPResponse, event.TypeRollback:
	default:
		return
	}
	p, err := event.DecodeFast(e)
	if err != nil {
		m.Skipped++
		return
	}
	m.apply(&e, p)
}

func (m *Mapper) apply(e *ledger.Entry, p event.Payload) {
	if e.Session == "" {
		switch p := p.(type) {
		case *event.EngineStarted:
			m.provider, m.model = p.Provider, p.Model
		case *event.MCPServerStarted:
			m.servers[p.Server] = p.Instance
		}
		if _, ok := p.(*event.Rollback); !ok {
			return
		}
	}
	s := m.session(e.Session)
	switch p := p.(type) {
	case *event.SessionCreated:
		s.otr = p.Mode == "otr"
		s.proxy = p.Mode == "mcp-proxy"
	case *event.ClientMessage:
		m.end(s.turns[""], nil)
		parent, _ := ParseTraceparent(p.Traceparent)
		o := m.startTurn(e, parent, "", p.MessageID)
		if kv, ok := m.content(s, "gen_ai.input.messages", messagesIf("user", p.Content)); ok {
			o.setAttrs(kv)
		}
		store(s.turns, "", o)
	case *event.ProcessRequest:
		if t := s.turns[p.SubAgentID]; t != nil && t.s != nil && p.SubAgentID == "" {
			return // the turn its client.message opened
		}
		m.end(s.turns[p.SubAgentID], nil)
		var parent trace.SpanContext
		if sub := s.subs[p.SubAgentID]; p.SubAgentID != "" && sub != nil {
			parent = sub.sc
		}
		o := m.startTurn(e, parent, p.SubAgentID, p.MessageID)
		if kv, ok := m.content(s, "gen_ai.input.messages", messagesIf("user", p.Content)); ok {
			o.setAttrs(kv)
		}
		store(s.turns, p.SubAgentID, o)
	case *event.ResponseComplete:
		o := s.turns[p.SubAgentID]
		m.addContent(s, o, "gen_ai.output.messages", messagesIf("assistant", p.Content))
		m.end(o, e)
		delete(s.turns, p.SubAgentID)
	case *event.AgentError:
		if o := s.turns[p.SubAgentID]; o != nil {
			o.errType = "opx.agent_error." + clean(p.Code, 64)
			m.end(o, e, attribute.String("opx.error.message", clean(p.Message, MaxString)))
			delete(s.turns, p.SubAgentID)
		}
	case *event.LLMRequest:
		parent := s.parentOf(p.SubAgentID)
		kv := []attribute.KeyValue{attribute.String("gen_ai.operation.name", "chat"),
			attribute.String("gen_ai.provider.name", clean(p.Provider, MaxString)),
			attribute.String("gen_ai.request.model", clean(p.Model, MaxString)),
			attribute.String("opx.request_id", clean(p.RequestID, MaxString))}
		if strings.HasPrefix(p.RequestID, "tier2_") {
			kv = append(kv, attribute.Bool("opx.shield.evaluator", true))
		}
		m.end(s.model[p.RequestID], nil)
		store(s.model, p.RequestID, m.start(e, parent, "chat "+clean(p.Model, MaxString), trace.SpanKindClient, kv...))
	case *event.LLMResponse:
		o := s.model[p.RequestID]
		if o == nil {
			return
		}
		delete(s.model, p.RequestID)
		kv := []attribute.KeyValue{attribute.String("gen_ai.response.model", clean(p.Model, MaxString)),
			attribute.Int64("gen_ai.usage.input_tokens", p.Usage.InputTokens),
			attribute.Int64("gen_ai.usage.output_tokens", p.Usage.OutputTokens),
			attribute.Int("http.response.status_code", p.Status), attribute.Int("opx.attempts", p.Attempts)}
		if p.FinishReason != "" {
			kv = append(kv, attribute.StringSlice("gen_ai.response.finish_reasons", []string{clean(p.FinishReason, MaxString)}))
		}
		if p.Error != "" {
			o.errType = "opx.model_error"
			kv = append(kv, attribute.String("opx.error.message", clean(p.Error, MaxString)))
		}
		m.addContent(s, o, "gen_ai.output.messages", messagesIf("assistant", p.Text))
		m.end(o, e, kv...)
	case *event.ToolProposed:
		k := callKey{p.SubAgentID, p.CallID}
		m.end(s.calls[k], nil)
		name, kind, kv := m.toolSpan(p.Tool, e.Session)
		kv = append(kv, attribute.String("gen_ai.tool.call.id", clean(p.CallID, MaxString)),
			attribute.String("opx.action_hash", p.ActionHash), attribute.Bool("opx.mutating", p.Mutating))
		if p.SubAgentID != "" {
			kv = append(kv, attribute.String("gen_ai.agent.id", clean(p.SubAgentID, MaxString)))
		}
		o := m.start(e, s.parentOf(p.SubAgentID), name, kind, kv...)
		m.addContent(s, o, "gen_ai.tool.call.arguments", p.Arguments)
		store(s.calls, k, o)
	case *event.ShieldVerdict:
		o := s.calls[callKey{p.SubAgentID, p.CallID}]
		m.event(o, e, "opx.shield.verdict", attribute.String("opx.shield.decision", p.Decision),
			attribute.Int("opx.shield.tier", p.Tier), attribute.String("opx.shield.rule", clean(p.Rule, MaxString)),
			attribute.String("opx.shield.reason", clean(p.Reason, MaxString)),
			attribute.String("opx.shield.policy_hash", p.PolicyHash), attribute.String("opx.action_hash", p.ActionHash))
		if o != nil && p.Decision == event.Block {
			o.enforced, o.errType = "blocked", "opx.blocked"
			o.setAttrs(attribute.Int64("opx.blocked.seq", int64(e.Seq)), attribute.String("opx.blocked.hash", m.hashOf(e)),
				attribute.String("opx.blocked.rule", clean(p.Rule, MaxString)))
		}
	case *event.ApprovalRequested:
		m.event(s.calls[callKey{p.SubAgentID, p.CallID}], e, "opx.approval.requested",
			attribute.String("opx.approval.id", clean(p.ApprovalID, MaxString)),
			attribute.String("opx.approval.reason", clean(p.Reason, MaxString)), attribute.Int64("opx.approval.timeout_ms", p.TimeoutMS))
	case *event.ApprovalResolved:
		o := s.calls[callKey{p.SubAgentID, p.CallID}]
		m.event(o, e, "opx.approval.resolved", attribute.String("opx.approval.id", clean(p.ApprovalID, MaxString)),
			attribute.Bool("opx.approval.approved", p.Approved), attribute.String("opx.approval.by", clean(p.By, MaxString)),
			attribute.String("opx.approval.reason", clean(p.Reason, MaxString)))
		if o != nil {
			if p.Approved {
				o.enforced = "approved"
			} else {
				o.enforced, o.errType = "denied", "opx.denied"
			}
		}
	case *event.Snapshot:
		m.event(s.calls[callKey{p.SubAgentID, p.CallID}], e, "opx.snapshot", attribute.String("opx.snapshot.kind", p.Kind),
			attribute.Int("opx.snapshot.files", len(p.Files)), attribute.Int64("opx.snapshot.entries", p.Entries))
	case *event.ExecStarted:
		o := s.calls[callKey{p.SubAgentID, p.CallID}]
		m.event(o, e, "opx.exec.started")
		if o != nil && o.enforced == "" {
			o.enforced = "allowed"
		}
	case *event.ExecCompleted:
		o := s.calls[callKey{p.SubAgentID, p.CallID}]
		outcome := event.ExecOutcome(p.Tool, int64(p.ExitCode), p.Failed)
		m.event(o, e, "opx.exec.completed", attribute.String("opx.exec.outcome", outcome),
			attribute.Int("opx.exec.exit_code", p.ExitCode), attribute.Int64("opx.exec.duration_ms", p.DurationMS))
		if o != nil {
			o.setAttrs(attribute.Int64("opx.exec.duration_ms", p.DurationMS), attribute.String("opx.exec.outcome", outcome))
			switch outcome {
			case event.ExecError:
				o.errType = "opx.tool_failed"
			case event.ExecExited:
				o.errType = "opx.exit_code"
			}
			m.addContent(s, o, "gen_ai.tool.call.result", p.Result)
		}
	case *event.ExecFailed:
		o := s.calls[callKey{p.SubAgentID, p.CallID}]
		m.event(o, e, "opx.exec.failed", attribute.String("opx.error.message", clean(p.Error, MaxString)))
		if o != nil {
			o.errType = "opx.tool_failed"
		}
	case *event.ResultFlagged:
		m.event(s.calls[callKey{p.SubAgentID, p.CallID}], e, "opx.shield.result_flagged",
			attribute.String("opx.shield.rule", clean(p.Rule, MaxString)), attribute.String("opx.shield.reason", clean(p.Reason, MaxString)),
			attribute.String("opx.shield.action", clean(p.Action, MaxString)))
	case *event.ToolResult:
		k := callKey{p.SubAgentID, p.CallID}
		o := s.calls[k]
		if o == nil {
			return
		}
		delete(s.calls, k)
		if p.IsError && o.errType == "" {
			o.errType = "opx.tool_error"
		}
		m.end(o, e, attribute.Int64("opx.result.size", p.Size))
	case *event.SubAgentSpawned:
		parent := s.parentOf("")
		if c := s.calls[callKey{"", p.ParentCallID}]; c != nil {
			parent = c.sc
		}
		m.end(s.subs[p.SubAgentID], nil)
		o := m.start(e, parent, "invoke_agent "+clean(p.SubAgentID, MaxString), trace.SpanKindInternal,
			attribute.String("gen_ai.operation.name", "invoke_agent"), attribute.String("gen_ai.agent.id", clean(p.SubAgentID, MaxString)),
			attribute.String("gen_ai.agent.name", clean(p.SubAgentID, MaxString)), attribute.String("gen_ai.request.model", clean(p.Model, MaxString)),
			attribute.String("opx.parent_call_id", clean(p.ParentCallID, MaxString)))
		m.addContent(s, o, "gen_ai.input.messages", messagesIf("user", p.Task))
		store(s.subs, p.SubAgentID, o)
	case *event.SubAgentCompleted:
		m.endSub(s, e, p.SubAgentID, "", attribute.Int64("gen_ai.usage.input_tokens", p.Usage.InputTokens),
			attribute.Int64("gen_ai.usage.output_tokens", p.Usage.OutputTokens), attribute.Int("opx.subagent.tool_calls", p.ToolCalls))
	case *event.SubAgentFailed:
		m.endSub(s, e, p.SubAgentID, "opx.subagent_failed", attribute.String("opx.error.message", clean(p.Reason, MaxString)))
	case *event.SubAgentCancelled:
		m.endSub(s, e, p.SubAgentID, "opx.subagent_cancelled")
	case *event.SubAgentTimedOut:
		m.endSub(s, e, p.SubAgentID, "opx.subagent_timed_out")
	case *event.MCPRequest:
		tool := ""
		if p.Method == "tools/call" {
			tool = toolName(p.Params)
		}
		name := clean(p.Method, MaxString)
		if tool != "" {
			name += " " + tool
		}
		kv := []attribute.KeyValue{attribute.String("mcp.method.name", clean(p.Method, MaxString)),
			attribute.String("mcp.session.id", clean(e.Session, MaxString)), attribute.String("jsonrpc.request.id", clean(p.RequestID, MaxString))}
		if tool != "" {
			kv = append(kv, attribute.String("gen_ai.tool.name", tool), attribute.String("gen_ai.operation.name", "execute_tool"))
		}
		m.end(s.mcp[p.RequestID], nil)
		o := m.start(e, trace.SpanContext{}, name, trace.SpanKindServer, kv...)
		m.addContent(s, o, "gen_ai.tool.call.arguments", p.Params)
		store(s.mcp, p.RequestID, o)
		if s.proxy && p.Method == "tools/call" {
			store(s.turns, "", o) // the proxied call's opx tool call nests under it
		}
	case *event.MCPResponse:
		o := s.mcp[p.RequestID]
		if o == nil {
			return
		}
		delete(s.mcp, p.RequestID)
		if s.turns[""] == o {
			delete(s.turns, "")
		}
		if p.Error != "" {
			o.errType = "opx.mcp_error"
		}
		m.addContent(s, o, "gen_ai.tool.call.result", p.Result)
		m.end(o, e, attribute.Int64("opx.mcp.duration_ms", p.DurationMS))
	case *event.Rollback:
		kv := []attribute.KeyValue{attribute.Int64("opx.rollback.snapshot", int64(p.Snapshot)),
			attribute.String("opx.rollback.session", clean(p.Session, MaxString))}
		if t := s.turns[""]; t != nil && t.s != nil {
			m.event(t, e, "opx.rollback", kv...)
			return
		}
		o := m.start(e, trace.SpanContext{}, "opx.rollback", trace.SpanKindInternal, kv...)
		m.event(o, e, "opx.rollback", kv...)
		m.end(o, e)
	}
}

// store keeps o under k, or forgets k when o is nil (a span not held).
func store[K comparable](mp map[K]*openSpan, k K, o *openSpan) {
	if o == nil {
		delete(mp, k)
		return
	}
	mp[k] = o
}

// messagesIf is text as the conventions' message list of role (withheld
// text as is, for content to refuse; "" for none).
func messagesIf(role, text string) string {
	if text == "" {
		return ""
	}
	if _, withheld := event.Withheld(text); withheld {
		return text
	}
	return messages(role, cut(text, MaxContent))
}

func (o *openSpan) setAttrs(kv ...attribute.KeyValue) {
	if o != nil && o.s != nil {
		o.s.SetAttributes(kv...)
	}
}

// startTurn opens an invoke_agent span for a turn.
func (m *Mapper) startTurn(e *ledger.Entry, parent trace.SpanContext, subagent, messageID string) *openSpan {
	agent := "opx"
	if subagent != "" {
		agent = clean(subagent, MaxString)
	}
	kv := []attribute.KeyValue{attribute.String("gen_ai.operation.name", "invoke_agent"),
		attribute.String("gen_ai.agent.name", agent), attribute.String("opx.message_id", clean(messageID, MaxString))}
	if m.provider != "" {
		kv = append(kv, attribute.String("gen_ai.provider.name", clean(m.provider, MaxString)),
			attribute.String("gen_ai.request.model", clean(m.model, MaxString)))
	}
	if subagent != "" {
		kv = append(kv, attribute.String("gen_ai.agent.id", agent))
	}
	return m.start(e, parent, "invoke_agent "+agent, trace.SpanKindInternal, kv...)
}

// parentOf is the span a model or tool call of subagent hangs under: its
// turn, else the sub-agent, else none (a new trace).
func (s *sessionState) parentOf(subagent string) trace.SpanContext {
	if t := s.turns[subagent]; t != nil {
		return t.sc
	}
	if sub := s.subs[subagent]; subagent != "" && sub != nil {
		return sub.sc
	}
	return trace.SpanContext{}
}

func (m *Mapper) endSub(s *sessionState, e *ledger.Entry, id, errType string, kv ...attribute.KeyValue) {
	o := s.subs[id]
	if o == nil {
		return
	}
	delete(s.subs, id)
	m.end(s.turns[id], nil)
	delete(s.turns, id)
	o.errType = errType
	m.end(o, e, kv...)
}

// toolSpan names a tool call's span: an MCP server's tool
// (mcp__server__tool) by the MCP conventions, any other execute_tool.
func (m *Mapper) toolSpan(tool, session string) (string, trace.SpanKind, []attribute.KeyValue) {
	tool = clean(tool, MaxString)
	kv := []attribute.KeyValue{attribute.String("gen_ai.operation.name", "execute_tool"), attribute.String("gen_ai.tool.name", tool)}
	if rest, ok := strings.CutPrefix(tool, "mcp__"); ok {
		if server, name, ok := strings.Cut(rest, "__"); ok {
			kv = append(kv, attribute.String("mcp.method.name", "tools/call"),
				attribute.String("mcp.session.id", server+"#"+strconv.Itoa(m.servers[server])),
				attribute.String("opx.mcp.server", server), attribute.String("opx.mcp.tool", name))
			return "tools/call " + name, trace.SpanKindClient, kv
		}
	}
	return "execute_tool " + tool, trace.SpanKindInternal, kv
}

// toolName reads params.name of a tools/call, bounded: at most MaxContent
// bytes of params are looked at.
func toolName(params string) string {
	if params == "" || len(params) > MaxContent {
		return ""
	}
	var p struct {
		Name string `json:"name"`
	}
	if json.Unmarshal([]byte(params), &p) != nil {
		return ""
	}
	return clean(p.Name, MaxString)
}

// Flush ends every span still open, at the last time each was seen, marked
// opx.open: what the ledger holds of them so far.
func (m *Mapper) Flush() {
	for _, s := range m.sessions {
		for _, set := range []map[string]*openSpan{s.mcp, s.model} {
			for k, o := range set {
				m.end(o, nil)
				delete(set, k)
			}
		}
		for k, o := range s.calls {
			m.end(o, nil)
			delete(s.calls, k)
		}
		for _, set := range []map[string]*openSpan{s.turns, s.subs} {
			for k, o := range set {
				m.end(o, nil)
				delete(set, k)
			}
		}
	}
	clear(m.sessions)
}

// cut returns at most n bytes of s, on a rune boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i]
}

// clean is s cut to n bytes, invalid UTF-8 replaced and every control
// character dropped (a recorded name cannot forge a line in a viewer).
func clean(s string, n int) string { return sanitize(s, n, false) }

// cleanContent is clean keeping newlines and tabs.
func cleanContent(s string, n int) string { return sanitize(s, n, true) }

func sanitize(s string, n int, keepLines bool) string {
	orig := len(s)
	s = cut(s, n)
	ok := utf8.ValidString(s)
	for _, r := range s {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || r == 0x202e {
			ok = false
			break
		}
	}
	if !ok {
		s = strings.ToValidUTF8(s, "\uFFFD")
		s = strings.Map(func(r rune) rune {
			if (r == '\n' || r == '\t') && keepLines {
				return r
			}
			if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || r == 0x202e {
				return -1
			}
			return r
		}, s)
	}
	if orig > len(s) && orig > n {
		s += "…[cut " + strconv.Itoa(orig) + " bytes]"
	}
	return s
}
