package otr

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/opx-dev/opx/engine/executor"
	"github.com/opx-dev/opx/engine/judge"
	"github.com/opx-dev/opx/engine/mcp"
	"github.com/opx-dev/opx/internal/textclip"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"github.com/opx-dev/opx/replay/projection"
)

// Off-the-record sessions (issue 15, docs/otr.md): read-only, and
// recorded as an envelope whose content members are keyed commitments
// (event.Withhold). The commitment key and the conversation live only in
// the engine's memory (State): nothing of them is logged or written,
// and both are gone when the engine exits.

// Mode is the mode of an off-the-record session.
const Mode = "otr"

// RuleReadOnly is the rule of the verdict that blocks a call that
// could change something in an off-the-record session.
const RuleReadOnly = "otr:read-only"

// maxApprovals bounds the pending approvals whose arguments one
// off-the-record session keeps in memory for the human who answers.
const maxApprovals = 64

// Restrict blocks, in an off-the-record session, every call that could
// change something: a mutating tool (files, memory_append, git_commit,
// execute_command), a tool the engine does not know (it cannot tell), and
// an http_request that is not a plain GET or HEAD (no body, no method
// override header). Sub-agents' calls are in their parent's session, so
// they are restricted alike. Spawning a sub-agent is allowed: what it
// does is judged here too.
func (o *State) Restrict(p judge.Proposal) *judge.Verdict {
	if !o.IsOTR(p.Session) {
		return nil
	}
	if reason := Mutates(p); reason != "" {
		return &judge.Verdict{Decision: event.Block, Tier: -1, Rule: RuleReadOnly,
			Reason: reason + "; an off-the-record session is read-only"}
	}
	return nil
}

// Mutates says why a proposal could change something, or "". The
// reason names the tool only: verdict reasons of an off-the-record
// session are withheld anyway, but the rule needs no arguments.
func Mutates(p judge.Proposal) string {
	switch {
	case !p.Known:
		return p.Tool + " is not a known tool, so it cannot be shown to be read-only"
	case p.Def.Mutating:
		return p.Tool + " changes the workspace or the agent's memory"
	case strings.HasPrefix(p.Def.Group, mcp.GroupPrefix):
		// A server may keep what it is sent (in its home, its logs, a
		// remote service), and what it prints lands in the engine's log
		// and in its mcp.* entries, outside the session: beyond what off
		// the record can withhold.
		return p.Tool + " is an MCP server's tool, which may keep or send on what it is given"
	case p.Tool == "http_request":
		var a struct {
			Method  string            `json:"method"`
			Headers map[string]string `json:"headers"`
			Body    *json.RawMessage  `json:"body"`
		}
		if json.Unmarshal(p.Args, &a) != nil {
			return "http_request arguments that do not parse"
		}
		m := strings.ToUpper(a.Method)
		if m != "" && m != "GET" && m != "HEAD" {
			return "http_request with method " + textclip.Cut(m, 16) + " may change remote state"
		}
		if a.Body != nil {
			return "http_request with a body may change remote state"
		}
		for h := range a.Headers {
			// Servers that honour X-HTTP-Method-Override and its kin
			// take a GET for the method named there.
			if l := strings.ToLower(h); strings.Contains(l, "method") {
				return "http_request with a header naming another method may change remote state"
			}
		}
	}
	return ""
}

// State is the engine's memory of off-the-record sessions: each one's
// commitment key and, for those this engine started, its conversation.
// Nothing in it is ever written anywhere.
type State struct {
	l  *ledger.Ledger
	mu sync.Mutex
	// sessions holds every off-the-record session this engine recorded
	// for; normalSessions every other session it knows.
	sessions       map[string]*Session
	normalSessions map[string]bool
	// messages maps the id of each message an entry of an
	// off-the-record session named (its sub-agents' included) to the
	// session, so that an entry about it recorded outside any session (a
	// late or unknown message) is withheld too.
	messages map[string]string
	// subagents maps the id of each sub-agent spawned in an
	// off-the-record session to it: the engine records a sub-agent's
	// process entries outside any session, and agent.crashed carries
	// the tail of its stderr.
	subagents map[string]string
	// active holds the OTR messages being answered (from client.message
	// to the answer or the agent's error), and drop a throwaway key: an
	// agent.memory_flush (which names no session) recorded while any is
	// active is withheld under it, as it may hold their content.
	active map[string]bool
	drop   *Session
	// known names what the engine keeps in clear: its tools, their
	// groups and its configured models (setKnown). Every other such name
	// is model output and withheld.
	known event.Known
}

// Session is one off-the-record session in memory.
type Session struct {
	id string // "" for the throwaway session
	c  *event.Commitments
	// live is true for a session this engine started: history then
	// holds its whole conversation. A session an earlier engine started
	// has a fresh key (entries recorded for it now, such as the denial
	// of an orphaned approval, are withheld all the same) and no
	// conversation to offer.
	live    bool
	history []*opxv1.ChatMessage
	// approvals keeps the arguments and reason of each pending
	// approval, for the human asked (ListApprovals); the ledger holds
	// only their commitments.
	approvals map[string][2]string
}

func New(l *ledger.Ledger) *State {
	return &State{l: l, sessions: map[string]*Session{}, normalSessions: map[string]bool{}, messages: map[string]string{}, subagents: map[string]string{}, active: map[string]bool{}}
}

// SetKnown sets the names kept in clear for sessions registered after.
func (o *State) SetKnown(k event.Known) {
	o.mu.Lock()
	o.known = k
	o.mu.Unlock()
}

// commitments returns a session's commitments under a fresh key. o.mu is
// held.
func (o *State) commitments() (*event.Commitments, error) {
	k, err := newKey()
	if err != nil {
		return nil, err
	}
	return event.NewCommitments(k).WithKnown(o.known), nil
}

// Known is what the engine knows of the names it records: its
// registered tools and their groups, and the models engine.started names
// (its provider's and the tier 2 evaluator's). A sub-agent's model chosen
// by its parent, an unknown tool a model made up and a group it asked
// for that does not exist are not known, so off the record they are
// withheld.
func Known(tools *executor.Registry, models ...string) event.Known {
	groups := map[string]bool{}
	for _, g := range tools.Groups() {
		groups[g] = true
	}
	named := map[string]bool{}
	for _, m := range models {
		named[m] = true
	}
	return event.Known{
		Tool: func(n string) bool {
			// load_tools is the agent's own (it asks with a
			// ToolDefsRequest), in no registry.
			_, ok := tools.Def(n)
			return ok || n == "load_tools"
		},
		// The MCP servers' groups come and go with them (mcp:<server>).
		Group: func(n string) bool {
			return groups[n] || strings.HasPrefix(n, mcp.GroupPrefix) && slices.Contains(tools.Groups(), n)
		},
		Model: func(n string) bool { return named[n] },
	}
}

// newKey returns a fresh random commitment key.
func newKey() ([32]byte, error) {
	var k [32]byte
	if _, err := rand.Read(k[:]); err != nil {
		return k, fmt.Errorf("off-the-record key: %w", err)
	}
	return k, nil
}

// start registers a new off-the-record session with a fresh key, before
// anything is recorded for it.
func (o *State) Start(session string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	c, err := o.commitments()
	if err != nil {
		return err
	}
	delete(o.normalSessions, session)
	o.sessions[session] = &Session{id: session, c: c, live: true, approvals: map[string][2]string{}}
	return nil
}

// normal records that session is not off the record, as the engine
// learnt creating or reading it, sparing a look at the projection.
func (o *State) Normal(session string) {
	o.mu.Lock()
	if o.sessions[session] == nil {
		o.normalSessions[session] = true
	}
	o.mu.Unlock()
}

// isOTR reports whether session is off the record.
func (o *State) IsOTR(session string) bool {
	s, err := o.lookup(session)
	// A lookup that failed is taken as off the record: restricted, and
	// recording then fails rather than write content.
	return s != nil || err != nil
}

// lookup returns the off-the-record session, or nil for a normal one. A
// session not seen yet is looked up in the sessions projection: one an
// earlier engine started off the record gets a fresh key (its old key is
// gone). Sessions this engine creates off the record are registered
// (start) before their session.created, so a session not found is normal.
func (o *State) lookup(session string) (*Session, error) {
	if session == "" {
		return nil, nil
	}
	o.mu.Lock()
	s, known := o.sessions[session]
	known = known || o.normalSessions[session]
	o.mu.Unlock()
	if known {
		return s, nil
	}
	var mode string
	err := o.l.ReadProjection(projection.Sessions{}, func(b ledger.Bucket) error {
		if ps, ok := projection.ReadSession(b, session); ok {
			mode = ps.Mode
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("is session %s off the record: %w", textclip.Cut(session, 64), err)
	}
	if mode != Mode {
		o.mu.Lock()
		o.normalSessions[session] = true
		o.mu.Unlock()
		return nil, nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if s := o.sessions[session]; s != nil {
		return s, nil
	}
	c, err := o.commitments()
	if err != nil {
		return nil, err
	}
	s = &Session{id: session, c: c, approvals: map[string][2]string{}}
	o.sessions[session] = s
	return s, nil
}

// forEntry returns the off-the-record session an entry of session with
// payload p belongs to, or nil: the session's own, or for an entry
// outside any session, the session of the message it names.
func (o *State) ForEntry(session string, p event.Payload) (*Session, error) {
	if session == "" {
		switch p.(type) {
		case *event.MemoryFlush:
			return o.dropIfActive()
		case *event.ToolDefsRequest, *event.ToolDefs:
			// load_tools' groups, asked for by the agent's model; the
			// entries name no message, so like a memory flush they are
			// withheld while any OTR message is being answered.
			return o.dropIfActive()
		}
	}
	if session == "" {
		o.mu.Lock()
		if id := messageIDOf(p); id != "" {
			session = o.messages[id]
		}
		if c, ok := p.(*event.AgentCrashed); ok && c.SubAgentID != "" {
			session = o.subagents[c.SubAgentID]
		}
		o.mu.Unlock()
	}
	return o.lookup(session)
}

// ended forgets an OTR message that ended without an answer or an
// agent.error of its own: its agent crashed or the engine is stopping
// (failInflight), or it could not be delivered. Otherwise it would stay
// active, and every memory flush and load_tools request recorded outside
// any session withheld, for the engine's life.
func (o *State) Ended(messageID string) {
	o.mu.Lock()
	delete(o.active, messageID)
	o.mu.Unlock()
}

// dropIfActive returns the throwaway session while an OTR message is
// being answered, else nil. Its key is never used for anything else, so
// what it withholds cannot even be compared with the sessions' members.
func (o *State) dropIfActive() (*Session, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.active) == 0 {
		return nil, nil
	}
	if o.drop == nil {
		c, err := o.commitments()
		if err != nil {
			return nil, err
		}
		o.drop = &Session{c: c, approvals: map[string][2]string{}}
	}
	return o.drop, nil
}

// messageIDOf returns the message id an entry names, or "".
func messageIDOf(p event.Payload) string {
	switch t := p.(type) {
	case *event.AgentTokens:
		return t.MessageID
	case *event.AgentToolCall:
		return t.MessageID
	case *event.ResponseComplete:
		return t.MessageID
	case *event.AgentError:
		return t.MessageID
	case *event.LLMRequest:
		return t.MessageID
	case *event.ToolProposed:
		return t.MessageID
	case *event.ApprovalRequested:
		return t.MessageID
	case *event.ProcessRequest:
		return t.MessageID
	case *event.ClientMessage:
		return t.MessageID
	}
	return ""
}

// withhold keeps what the engine must remember of an entry of s (its
// conversation, a pending approval's arguments) and returns the payload
// to record: p withheld.
func (o *State) Withhold(s *Session, p event.Payload) (event.Payload, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	now := time.Now().UnixNano()
	if id := messageIDOf(p); id != "" && s.id != "" {
		// Every message of the session, the sub-agents' included.
		o.messages[id] = s.id
	}
	switch t := p.(type) {
	case *event.SubAgentSpawned:
		if s.id != "" {
			o.subagents[t.SubAgentID] = s.id
		}
	case *event.ClientMessage:
		o.active[t.MessageID] = true
		if s.live {
			s.history = append(s.history, &opxv1.ChatMessage{Id: t.MessageID, Role: "user", Content: t.Content, Timestamp: now})
		}
	case *event.AgentError:
		delete(o.active, t.MessageID)
	case *event.ResponseComplete:
		if t.SubAgentID == "" {
			delete(o.active, t.MessageID)
		}
		if s.live && t.SubAgentID == "" {
			m := &opxv1.ChatMessage{Id: t.MessageID + "/answer", Role: "assistant", Content: t.Content, Timestamp: now,
				TokenUsage: &opxv1.TokenUsage{InputTokens: t.Usage.InputTokens, OutputTokens: t.Usage.OutputTokens, TotalTokens: t.Usage.TotalTokens}}
			for _, th := range t.Thoughts {
				m.Thoughts = append(m.Thoughts, &opxv1.Thought{Stage: th.Stage, Summary: th.Summary, Detail: []byte(th.Detail)})
			}
			s.history = append(s.history, m)
		}
	case *event.ApprovalRequested:
		if len(s.approvals) < maxApprovals {
			s.approvals[t.ApprovalID] = [2]string{t.Arguments, t.Reason}
		}
	case *event.ApprovalResolved:
		delete(s.approvals, t.ApprovalID)
	}
	return event.Withhold(p, s.c)
}

// ErrGone is returned for a message to an off-the-record session an
// earlier engine started.
var ErrGone = errors.New("its conversation was kept only in the memory of the engine that started it, which has exited; start a new off-the-record session")

// conversation returns the history to give the agent for an
// off-the-record session, or ErrGone.
func (o *State) Conversation(session string) ([]*opxv1.ChatMessage, error) {
	s, err := o.lookup(session)
	if err != nil {
		return nil, err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if s == nil || !s.live {
		return nil, ErrGone
	}
	return append([]*opxv1.ChatMessage(nil), s.history...), nil
}

// approval returns a pending approval's arguments and reason as the
// engine saw them, for the human who answers it; false when the session
// is normal or they are not in memory.
func (o *State) Approval(session, id string) (args, reason string, ok bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	s := o.sessions[session]
	if s == nil {
		return "", "", false
	}
	a, ok := s.approvals[id]
	return a[0], a[1], ok
}
