package rerun

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// Recording is one session as the ledger holds it, with what a rerun
// needs to re-drive it. Lists are in seq order.
type Recording struct {
	Session string
	Mode    string // session.created's mode
	Title   string
	// Entries are the session's entries: what a rerun is compared with.
	Entries []ledger.Entry
	// Messages are the client messages, to be fed as recorded.
	Messages []*Message
	// Calls are the agents' model calls through the gateway (the
	// session's own agent's and its sub-agents'); Tier2 the tier 2
	// evaluator's.
	Calls, Tier2 []*ModelCall
	// SubAgents are the sub-agents the session spawned, in order.
	SubAgents []*SubAgent
	// Proposals are the tool calls the engine judged.
	Proposals []*Proposal
	// Approvals are the escalations to a human and their answers.
	Approvals []*Approval
	// Start and End are the timestamps of the session's first and last
	// entries: its recorded wall time.
	Start, End time.Time
	// Engine is the engine run in force when the session was created.
	Engine *Engine
	// Proxy is an mcp-proxy session's client and requests (nil for other
	// sessions).
	Proxy *Proxy
	// Hook is a session of an agent audited through its hooks (mode
	// claude-code, codex, gemini-cli): the agent and its calls (nil for
	// other sessions). Its model calls never passed through opx: there
	// is nothing to re-drive, only proposals to re-judge.
	Hook *Hook

	l Source
}

// Engine is the configuration of one engine run, from its engine.started.
type Engine struct {
	Seq     uint64
	Started event.EngineStarted
	// PolicyText is the policy recorded as policy_blob; nil for a ledger
	// written before engines recorded it.
	PolicyText []byte
}

// Message is a client message and the directive that handed it over.
type Message struct {
	Seq                       uint64
	ID, Content, Client, Mode string
	Tools                     []string // offered in engine.process_request
	Engine                    *Engine  // in force when it arrived
	// MCP are the engine's MCP servers' latest tool listings when it was
	// handed to the agent (engine.process_request), sorted by server:
	// what the tools named mcp__<server>__<tool> were. Only those Tools
	// names were offered (a server down then offered none).
	MCP []*MCPListing
}

// MCPListing is an mcp.tools_listed of the engine's own servers, with its
// listing (the server's tools/list answer) read.
type MCPListing struct {
	Seq uint64
	event.MCPToolsListed
	Listing []byte
}

// SubAgent is a sub-agent the session spawned, as subagent.spawned
// recorded it.
type SubAgent struct {
	Seq uint64
	event.SubAgentSpawned
	// EndSeq and End are the entry that ended it (subagent.completed,
	// failed, cancelled or timed_out); 0 and nil when none was recorded.
	EndSeq uint64
	End    event.Payload
}

// ModelCall is one model call: the exact request body and the raw
// response body (nil when none arrived), with how it went. SubAgentID
// names the thread that made it ("" the session's own agent).
type ModelCall struct {
	RequestSeq, ResponseSeq uint64 // ResponseSeq 0: no llm.response recorded
	SubAgentID              string
	RequestID, MessageID    string
	Provider, Model         string
	Request, Response       []byte
	Attempts, Status        int
	Error                   string
	Engine                  *Engine
}

// Proposal is one judged tool call and everything recorded about it.
// SubAgentID names the thread that proposed it ("" the session's own
// agent): call ids are unique within a thread only.
type Proposal struct {
	Seq                                uint64
	TS                                 time.Time
	SubAgentID                         string
	MessageID, CallID, Tool, Arguments string
	Mutating                           bool
	// Links are the recorded resolutions of the call's paths through
	// symlinks (event.ToolProposed.Links).
	Links map[string]string
	// Manifests, Sensitive and Taint are what else was observed with it
	// (event.ToolProposed): manifests' changes, sensitive reads, and the
	// session's taint.
	Manifests []event.ManifestChanges
	Sensitive []string
	// Toolchain are the programs the workspace declared
	// (event.ToolProposed.Toolchain).
	Toolchain []string
	Taint     []event.Taint
	Engine    *Engine
	Verdicts  []Verdict
	Snapshot  *event.Snapshot // nil: none taken
	Started   bool            // exec.started recorded
	Completed *event.ExecCompleted
	Failed    *event.ExecFailed
	// DoneSeq is the seq of Completed or Failed (0: neither recorded).
	DoneSeq uint64
	// Result is what the agent was answered (engine.tool_result), with
	// its full content; nil when no answer was recorded.
	Result        *event.ToolResult
	ResultContent string
	// AgentCall is, in a hook session, the agent's call this proposal is
	// one of the opx calls of (nil for any other proposal).
	AgentCall *AgentCall
}

// Hook is what a hook session recorded of its agent.
type Hook struct {
	// Agent is the first hook.session (nil when none was recorded).
	Agent *event.HookSession
	// Calls are the agent's tool calls (hook.tool_call), in order.
	Calls []*AgentCall
}

// AgentCall is one tool call of an agent audited through its hooks, with
// the proposals of its opx calls, in order.
type AgentCall struct {
	Seq uint64
	event.HookToolCall
	Proposals []*Proposal
}

// Verdict is one recorded shield.verdict.
type Verdict struct {
	Seq uint64
	event.ShieldVerdict
}

// Approval is an escalation to a human and its answer (nil if none).
type Approval struct {
	Seq       uint64
	Requested event.ApprovalRequested
	Resolved  *event.ApprovalResolved
	// ResolvedSeq is Resolved's seq (0: no answer recorded).
	ResolvedSeq uint64
}

// Proxy is what an `opx mcp-proxy` session recorded of its client and
// its upstream.
type Proxy struct {
	Client *event.MCPClient
	// Steps are the client's requests (mcp.request), in order, each with
	// its answer.
	Steps []*ProxyStep
	// Listings are the upstream's tool listings (mcp.tools_listed in the
	// session), in order.
	Listings []*MCPListing
}

// ProxyStep is one request of a proxied client and the answer it got.
type ProxyStep struct {
	Seq     uint64
	Request event.MCPRequest
	Params  []byte // the whole params
	// ResponseSeq is 0 (and Response nil) when no answer was recorded.
	ResponseSeq uint64
	Response    *event.MCPResponse
	Result      []byte // the whole result
}

// Listing is the listing in force at seq: the last recorded before it.
func (p *Proxy) Listing(seq uint64) *MCPListing {
	var out *MCPListing
	for _, l := range p.Listings {
		if l.Seq < seq {
			out = l
		}
	}
	return out
}

// Tier2Prefix starts the request id of every tier 2 model call.
const Tier2Prefix = "tier2_"

// Source is a ledger a session is loaded from: the file (*ledger.Ledger),
// or a running engine's ledger read through its LedgerService, as the
// review commands read it.
type Source interface {
	// Range calls fn with each entry from..to (to past the head: up to
	// the head), in seq order.
	Range(from, to uint64, fn func(ledger.Entry) error) error
	// GetBlob returns a blob's content, hash-checked.
	GetBlob(h ledger.Hash) ([]byte, error)
}

// Load reads session from l: one pass over the ledger up to its head,
// keeping the session's entries and the engine runs in force for them,
// and reading (hash-checked) the blobs a rerun serves. l must stay open
// while the Recording is used (Blob reads from it).
func Load(l Source, session string) (*Recording, error) {
	r := &Recording{Session: session, l: l}
	var (
		engine    *Engine
		mcpNow    = map[string]*MCPListing{} // the engine's servers' latest listings
		created   bool
		calls     = map[string]*ModelCall{}
		proposals = map[string]*Proposal{}
		messages  = map[string]*Message{}
		approvals = map[string]*Approval{}
	)
	err := l.Range(0, ^uint64(0), func(en ledger.Entry) error {
		if en.Type == event.TypeEngineStarted {
			p, err := event.Decode(en)
			if err != nil {
				return err
			}
			engine = &Engine{Seq: en.Seq, Started: *p.(*event.EngineStarted)}
			clear(mcpNow)
			if b := engine.Started.PolicyBlob; b != "" {
				if engine.PolicyText, err = r.blob(b); err != nil {
					return fmt.Errorf("entry %d: policy_blob: %w", en.Seq, err)
				}
			}
			return nil
		}
		if en.Session == "" && en.Type == event.TypeMCPToolsListed {
			return r.mcpServer(en, mcpNow)
		}
		if en.Session != session || en.Type == event.TypeNote || en.Type == event.TypeCheckpoint {
			return nil
		}
		r.Entries = append(r.Entries, en)
		p, err := event.Decode(en)
		if errors.Is(err, event.ErrUnknownType) {
			return nil // compared, but nothing a rerun serves
		}
		if err != nil {
			return err
		}
		if err := r.add(en, p, engine, &created, calls, proposals, messages, approvals); err != nil {
			return err
		}
		if pr, ok := p.(*event.ProcessRequest); ok && pr.SubAgentID == "" {
			// The tools offered with the message are those of its
			// engine.process_request: the listings in force then.
			if m := messages[pr.MessageID]; m != nil {
				m.MCP = m.MCP[:0]
				for _, l := range mcpNow {
					m.MCP = append(m.MCP, l)
				}
				sort.Slice(m.MCP, func(i, j int) bool { return m.MCP[i].Server < m.MCP[j].Server })
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read session %s: %w", session, err)
	}
	if !created {
		return nil, fmt.Errorf("%w: %q", ErrNoSession, session)
	}
	first, last := r.Entries[0], r.Entries[len(r.Entries)-1]
	r.Start, _ = first.Time()
	r.End, _ = last.Time()
	return r, nil
}

// add files one entry of the session.
func (r *Recording) add(en ledger.Entry, p event.Payload, engine *Engine, created *bool,
	calls map[string]*ModelCall, proposals map[string]*Proposal, messages map[string]*Message, approvals map[string]*Approval) error {
	var err error
	switch x := p.(type) {
	case *event.SessionCreated:
		if x.Mode == "otr" {
			// Its texts are keyed commitments and its blobs were never
			// stored (docs/otr.md): nothing to serve or compare.
			return fmt.Errorf("%w: not replayable: the session is off the record (its arguments and bodies were withheld), so it can be neither rerun nor re-judged under another policy", ErrNotReplayable)
		}
		*created = true
		r.Mode, r.Title, r.Engine = x.Mode, x.Title, engine
		if x.Mode == "mcp-proxy" {
			r.Proxy = &Proxy{}
		}
		if event.HookMode(x.Mode) {
			r.Hook = &Hook{}
		}
	case *event.HookSession:
		if r.Hook != nil && r.Hook.Agent == nil {
			r.Hook.Agent = x
		}
	case *event.HookToolCall:
		if r.Hook != nil {
			r.Hook.Calls = append(r.Hook.Calls, &AgentCall{Seq: en.Seq, HookToolCall: *x})
		}
	case *event.SubAgentSpawned:
		r.SubAgents = append(r.SubAgents, &SubAgent{Seq: en.Seq, SubAgentSpawned: *x})
	case *event.SubAgentCompleted, *event.SubAgentFailed, *event.SubAgentCancelled, *event.SubAgentTimedOut:
		r.ended(en.Seq, p)
	case *event.ClientMessage:
		m := &Message{Seq: en.Seq, ID: x.MessageID, Content: x.Content, Client: x.Client, Mode: r.Mode, Engine: engine}
		r.Messages = append(r.Messages, m)
		messages[x.MessageID] = m
	case *event.ProcessRequest:
		if m := messages[x.MessageID]; m != nil && x.SubAgentID == "" {
			m.Mode, m.Tools = x.Mode, x.Tools
		}
	case *event.LLMRequest:
		c := &ModelCall{RequestSeq: en.Seq, SubAgentID: x.SubAgentID, RequestID: x.RequestID, MessageID: x.MessageID, Provider: x.Provider, Model: x.Model, Engine: engine}
		if c.Request, err = r.blob(x.Blob); err != nil {
			return fmt.Errorf("entry %d: %w", en.Seq, err)
		}
		calls[x.RequestID] = c
		if strings.HasPrefix(x.RequestID, Tier2Prefix) {
			r.Tier2 = append(r.Tier2, c)
		} else {
			r.Calls = append(r.Calls, c)
		}
	case *event.LLMResponse:
		c := calls[x.RequestID]
		if c == nil || c.ResponseSeq != 0 {
			return nil // a response to no request of this session: compared, not served
		}
		c.ResponseSeq, c.Attempts, c.Status, c.Error = en.Seq, x.Attempts, x.Status, x.Error
		if x.Blob != "" {
			if c.Response, err = r.blob(x.Blob); err != nil {
				return fmt.Errorf("entry %d: %w", en.Seq, err)
			}
		}
	case *event.ToolProposed:
		ts, _ := en.Time()
		pr := &Proposal{Seq: en.Seq, TS: ts, SubAgentID: x.SubAgentID, MessageID: x.MessageID, CallID: x.CallID, Tool: x.Tool, Arguments: x.Arguments,
			Mutating: x.Mutating, Links: event.LinkMap(x.Links), Manifests: x.Manifests, Sensitive: x.Sensitive, Taint: x.Taint, Toolchain: x.Toolchain, Engine: engine}
		r.Proposals = append(r.Proposals, pr)
		proposals[CallKey(x.SubAgentID, x.CallID)] = pr
		if ac := r.agentCall(x.CallID); ac != nil && x.SubAgentID == "" {
			pr.AgentCall = ac
			ac.Proposals = append(ac.Proposals, pr)
		}
	case *event.ShieldVerdict:
		if pr := proposals[CallKey(x.SubAgentID, x.CallID)]; pr != nil {
			pr.Verdicts = append(pr.Verdicts, Verdict{Seq: en.Seq, ShieldVerdict: *x})
		}
	case *event.Snapshot:
		if pr := proposals[CallKey(x.SubAgentID, x.CallID)]; pr != nil && !pr.Started {
			pr.Snapshot = x
		}
	case *event.ExecStarted:
		if pr := proposals[CallKey(x.SubAgentID, x.CallID)]; pr != nil {
			pr.Started = true
		}
	case *event.ExecCompleted:
		if pr := proposals[CallKey(x.SubAgentID, x.CallID)]; pr != nil {
			pr.Completed, pr.DoneSeq = x, en.Seq
		}
	case *event.ExecFailed:
		if pr := proposals[CallKey(x.SubAgentID, x.CallID)]; pr != nil {
			pr.Failed, pr.DoneSeq = x, en.Seq
		}
	case *event.ToolResult:
		// Calls refused before their proposal (bad arguments, too many
		// calls) are answered too; they have no proposal waiting.
		if pr := proposals[CallKey(x.SubAgentID, x.CallID)]; pr != nil && pr.Result == nil {
			pr.Result, pr.ResultContent = x, x.Content
			if x.Blob != "" {
				b, err := r.blob(x.Blob)
				if err != nil {
					return fmt.Errorf("entry %d: %w", en.Seq, err)
				}
				pr.ResultContent = string(b)
			}
		}
	case *event.MCPClient, *event.MCPRequest, *event.MCPResponse, *event.MCPToolsListed:
		if r.Proxy != nil {
			return r.addProxy(en, p, proposals)
		}
	case *event.ApprovalRequested:
		a := &Approval{Seq: en.Seq, Requested: *x}
		r.Approvals = append(r.Approvals, a)
		approvals[x.ApprovalID] = a
	case *event.ApprovalResolved:
		if a := approvals[x.ApprovalID]; a != nil && a.Resolved == nil {
			a.Resolved, a.ResolvedSeq = x, en.Seq
		}
	}
	return nil
}

// mcpServer follows the engine's own MCP servers: a listing replaces the
// server's last. An exit does not forget it: whether a server was up
// when a message's tools were chosen is told by the tools its
// engine.process_request names (a server's exit or restart can be
// recorded between that choice and that entry), so a rerun offers a
// server's last listing filtered by those names (engine/redrive/mcp.go).
func (r *Recording) mcpServer(en ledger.Entry, now map[string]*MCPListing) error {
	p, err := event.Decode(en)
	if err != nil {
		return nil // compared nowhere (not the session's), served as far as it can be
	}
	switch x := p.(type) {
	case *event.MCPToolsListed:
		l := &MCPListing{Seq: en.Seq, MCPToolsListed: *x, Listing: []byte(x.Listing)}
		if x.ListingBlob != "" {
			// Unreadable, the tools are offered without their
			// descriptions, and a rerun diverges where that mattered:
			// the sessions that used no MCP tool still rerun.
			l.Listing, _ = r.blob(x.ListingBlob)
		}
		now[x.Server] = l
	}
	return nil
}

// addProxy files an entry of an mcp-proxy session. The answer to a
// tools/call (its request id is the call id) is what the client was
// answered: a rerun serves it as the call's recorded answer.
func (r *Recording) addProxy(en ledger.Entry, p event.Payload, proposals map[string]*Proposal) error {
	var err error
	switch x := p.(type) {
	case *event.MCPClient:
		if r.Proxy.Client == nil {
			r.Proxy.Client = x
		}
	case *event.MCPRequest:
		st := &ProxyStep{Seq: en.Seq, Request: *x, Params: []byte(x.Params)}
		if x.ParamsBlob != "" {
			if st.Params, err = r.blob(x.ParamsBlob); err != nil {
				return fmt.Errorf("entry %d: %w", en.Seq, err)
			}
		}
		r.Proxy.Steps = append(r.Proxy.Steps, st)
	case *event.MCPResponse:
		var st *ProxyStep
		for _, s := range r.Proxy.Steps {
			if s.Request.RequestID == x.RequestID && s.Response == nil {
				st = s
			}
		}
		if st == nil {
			return nil // an answer to no request: compared, not served
		}
		st.ResponseSeq, st.Response, st.Result = en.Seq, x, []byte(x.Result)
		if x.ResultBlob != "" {
			if st.Result, err = r.blob(x.ResultBlob); err != nil {
				return fmt.Errorf("entry %d: %w", en.Seq, err)
			}
		}
		if pr := proposals[CallKey("", x.RequestID)]; x.Method == "tools/call" && pr != nil && pr.Result == nil {
			var res struct {
				IsError bool `json:"isError"`
			}
			_ = json.Unmarshal(st.Result, &res)
			pr.Result = &event.ToolResult{CallID: x.RequestID, IsError: res.IsError || x.Error != ""}
			pr.ResultContent = string(st.Result)
		}
	case *event.MCPToolsListed:
		l := &MCPListing{Seq: en.Seq, MCPToolsListed: *x, Listing: []byte(x.Listing)}
		if x.ListingBlob != "" {
			if l.Listing, err = r.blob(x.ListingBlob); err != nil {
				return fmt.Errorf("entry %d: %w", en.Seq, err)
			}
		}
		r.Proxy.Listings = append(r.Proxy.Listings, l)
	}
	return nil
}

// agentCall returns, in a hook session, the agent's call whose opx call
// id is id (event.HookCallID); nil for none.
func (r *Recording) agentCall(id string) *AgentCall {
	if r.Hook == nil || !event.IsHookCallID(id) {
		return nil
	}
	s, _, _ := strings.Cut(id[2:], ".")
	seq, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return nil
	}
	// The latest agent call is the likeliest: its opx calls follow it.
	for i := len(r.Hook.Calls) - 1; i >= 0; i-- {
		if ac := r.Hook.Calls[i]; ac.Seq == seq {
			return ac
		}
	}
	return nil
}

// ended files the entry that ended a sub-agent (the first, if a forged
// record holds more: verify --strict refuses that anyway).
func (r *Recording) ended(seq uint64, p event.Payload) {
	id := subAgentOf(p)
	for _, s := range r.SubAgents {
		if s.SubAgentID == id && s.End == nil {
			s.EndSeq, s.End = seq, p
		}
	}
}

// subAgentOf is the sub-agent an end entry names.
func subAgentOf(p event.Payload) string {
	switch x := p.(type) {
	case *event.SubAgentCompleted:
		return x.SubAgentID
	case *event.SubAgentFailed:
		return x.SubAgentID
	case *event.SubAgentCancelled:
		return x.SubAgentID
	case *event.SubAgentTimedOut:
		return x.SubAgentID
	}
	return ""
}

// CallKey identifies a call within a session: call ids are unique within
// a thread (the session's own agent, subagent "", or one sub-agent) only.
func CallKey(subagent, callID string) string { return subagent + "\x00" + callID }

// Blob returns a blob of the recorded ledger, hash-checked.
func (r *Recording) Blob(hash string) ([]byte, error) { return r.blob(hash) }

func (r *Recording) blob(hash string) ([]byte, error) {
	h, err := ledger.ParseHash(hash)
	if err != nil {
		return nil, err
	}
	b, err := r.l.GetBlob(h)
	if err != nil {
		return nil, err
	}
	if ledger.Sum(b) != h { // GetBlob checks too; a rerun serves nothing unchecked
		return nil, fmt.Errorf("blob %s does not hash to its name", hash)
	}
	return b, nil
}

// Engines returns the engine runs the session's messages arrived under
// (an mcp-proxy session's: that it was created under, then those its
// calls were proposed under), in order, each once.
func (r *Recording) Engines() []*Engine {
	var out []*Engine
	seen := map[*Engine]bool{}
	add := func(en *Engine) {
		if en != nil && !seen[en] {
			seen[en] = true
			out = append(out, en)
		}
	}
	for _, m := range r.Messages {
		add(m.Engine)
	}
	if r.Proxy != nil {
		add(r.Engine)
		for _, p := range r.Proposals {
			add(p.Engine)
		}
	}
	return out
}

// FirstEngine is the engine run a rerun starts as: that of the first
// message, or (an mcp-proxy session) that the session was created under.
func (r *Recording) FirstEngine() *Engine {
	if len(r.Messages) > 0 {
		return r.Messages[0].Engine
	}
	return r.Engine
}

// Result returns the full ExecCompleted result text of a proposal.
func (r *Recording) Result(c *event.ExecCompleted) (string, error) {
	if c.ResultBlob == "" {
		return c.Result, nil
	}
	b, err := r.blob(c.ResultBlob)
	return string(b), err
}
