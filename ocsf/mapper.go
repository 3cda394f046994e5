package ocsf

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// SchemaVersion is the OCSF version the events declare (metadata.version).
const SchemaVersion = "1.9.0-dev"

// Bounds of the state a Mapper keeps between entries.
const (
	// maxCalls bounds the tool calls remembered between their proposal
	// and their end; the oldest is forgotten first (its end then maps
	// without the proposal's command and the snapshot's pre-states).
	maxCalls = 4096
	// maxSessions bounds the sessions whose mode and model are known.
	maxSessions = 16384
	// maxSnapshotFiles bounds the pre-states kept per call.
	maxSnapshotFiles = MaxFileEvents
)

// Options configure a Mapper.
type Options struct {
	// LedgerID is the ledger's id: the chain's uid.
	LedgerID string
	// Host is the engine's host name (device.hostname); "" when unknown.
	Host string
	// Version is the exporting opx's version, the product version until
	// an engine.started names the recording engine's.
	Version string
	// Session, when set, keeps only the events of that session.
	Session string
}

// Checkpoint is a signed checkpoint: the tree of the entries before seq.
type Checkpoint struct {
	Seq      uint64
	TreeSize uint64
	Root     string // base64, as in the note
	Note     string
	Signer   string // the note's key name
	Time     int64  // ms since the epoch, the checkpoint entry's ts
}

// Mapper turns ledger entries, in seq order, into OCSF events. It keeps
// bounded state between entries (the calls in flight, the sessions'
// modes and models, the engine's version and model).
type Mapper struct {
	o       Options
	host    *Device
	version string
	model   *AIModel // the engine's configured model
	cp      *Checkpoint

	calls    map[callKey]*call
	callRing []callKey // the keys of calls in insertion order, a ring
	callNext int
	sessions map[string]*sessionState
	sessRing []string
	sessNext int
}

type callKey struct{ session, subagent, id string }

// call is what the ledger said of a call before its end.
type call struct {
	tool     string
	cmd      string
	cut      bool
	approved bool
	decided  bool
	pre      []event.FileState
}

type sessionState struct {
	mode  string
	model *AIModel
}

// NewMapper returns a Mapper for one ledger.
func NewMapper(o Options) *Mapper {
	m := &Mapper{o: o, version: o.Version, calls: map[callKey]*call{}, sessions: map[string]*sessionState{}}
	m.o.LedgerID, _ = clip(o.LedgerID, MaxName)
	m.o.Session, _ = clip(o.Session, MaxName)
	host, _ := clip(o.Host, MaxName)
	m.host = &Device{Hostname: host, TypeID: 0, Type: "Unknown"}
	if host == "" {
		m.host.Hostname, m.host.Name = "", "unknown"
	}
	return m
}

// SetCheckpoint names the latest signed checkpoint: every later event of
// an entry it covers (seq < TreeSize) carries it.
func (m *Mapper) SetCheckpoint(cp Checkpoint) { m.cp = &cp }

// Map appends to dst the events entry e yields, one JSON object per
// line, and returns dst and how many it appended. Entries must come in
// seq order (the chain is the caller's to check). Most entry types yield
// nothing; an execution yields its call's event and one per file it
// changed.
func (m *Mapper) Map(dst []byte, e *ledger.Entry) ([]byte, int, error) {
	evs := m.events(e)
	if len(evs) == 0 {
		return dst, 0, nil
	}
	att := m.attestation(e)
	for i := range evs {
		ev := &evs[i]
		ev.AttestationList = []Attestation{att}
		ev.Metadata.Sequence = int64(e.Seq)
		m.withCheckpoint(ev, e.Seq)
		if i > 0 {
			ev.Metadata.UID = fmt.Sprintf("%s:%d/%d", m.o.LedgerID, e.Seq, i)
		} else {
			ev.Metadata.UID = fmt.Sprintf("%s:%d", m.o.LedgerID, e.Seq)
		}
		b, err := json.Marshal(ev)
		if err != nil {
			return dst, 0, fmt.Errorf("ocsf: entry %d: %w", e.Seq, err)
		}
		dst = append(append(dst, b...), '\n')
	}
	return dst, len(evs), nil
}

// events builds the events of one entry, without their integrity data.
func (m *Mapper) events(e *ledger.Entry) []Event {
	switch e.Type {
	case event.TypeEngineStarted:
		var p event.EngineStarted
		if json.Unmarshal(e.Data, &p) == nil {
			if v, _ := clip(p.Version, MaxName); v != "" && !withheld(v) {
				m.version = v
			}
			m.model = model(p.Model, p.Provider)
		}
		return nil
	case event.TypeSessionCreated:
		var p event.SessionCreated
		if json.Unmarshal(e.Data, &p) == nil {
			m.session(e.Session).mode = p.Mode
		}
		return nil
	case event.TypeLLMRequest:
		var p event.LLMRequest
		if json.Unmarshal(e.Data, &p) == nil && e.Session != "" {
			if md := model(p.Model, p.Provider); md != nil {
				m.session(e.Session).model = md
			}
		}
		return nil
	}
	if m.o.Session != "" && e.Session != m.o.Session {
		return nil // calls are keyed by session: no other session's state is read
	}
	switch e.Type {
	case event.TypeToolProposed:
		var p event.ToolProposed
		if json.Unmarshal(e.Data, &p) == nil {
			c := &call{tool: p.Tool}
			if p.Tool == "execute_command" {
				var a struct {
					Command string `json:"command"`
				}
				if json.Unmarshal([]byte(p.Arguments), &a) == nil {
					c.cmd, c.cut = clip(a.Command, MaxCmdLine)
				}
			}
			m.putCall(m.key(e.Session, p.SubAgentID, p.CallID), c)
		}
		return nil
	case event.TypeSnapshot:
		var p event.Snapshot
		if json.Unmarshal(e.Data, &p) == nil {
			if c := m.calls[m.key(e.Session, p.SubAgentID, p.CallID)]; c != nil && p.Kind == event.KindFiles {
				c.pre = p.Files[:min(len(p.Files), maxSnapshotFiles)]
			}
		}
		return nil
	case event.TypeShieldVerdict:
		var p event.ShieldVerdict
		if json.Unmarshal(e.Data, &p) != nil {
			return nil
		}
		return m.verdict(e, &p)
	case event.TypeApprovalResolved:
		var p event.ApprovalResolved
		if json.Unmarshal(e.Data, &p) != nil {
			return nil
		}
		return m.approval(e, &p)
	case event.TypeResultFlagged:
		var p event.ResultFlagged
		if json.Unmarshal(e.Data, &p) != nil {
			return nil
		}
		return m.flagged(e, &p)
	case event.TypeExecCompleted:
		var p event.ExecCompleted
		if json.Unmarshal(e.Data, &p) != nil {
			return nil
		}
		return m.completed(e, &p)
	case event.TypeExecFailed:
		var p event.ExecFailed
		if json.Unmarshal(e.Data, &p) != nil {
			return nil
		}
		return m.failed(e, &p)
	case event.TypeMCPResponse:
		var p event.MCPResponse
		if json.Unmarshal(e.Data, &p) != nil {
			return nil
		}
		return m.mcpResponse(e, &p)
	}
	return nil
}

// model is an AI model, nil when either part is unknown or withheld.
func model(name, provider string) *AIModel {
	n, _ := clip(name, MaxName)
	p, _ := clip(provider, MaxName)
	if n == "" || p == "" || withheld(n) || withheld(p) {
		return nil
	}
	return &AIModel{Name: n, AIProvider: p}
}

func (m *Mapper) key(session, subagent, id string) callKey {
	s, _ := clip(session, MaxName)
	a, _ := clip(subagent, MaxName)
	i, _ := clip(id, MaxName)
	return callKey{s, a, i}
}

// putCall remembers a call. Each new key takes the next slot of a ring
// of maxCalls, forgetting the call whose key held it, so at most
// maxCalls are remembered. (A slot may name a call already ended, or one
// whose id was reused since; forgetting that one early costs detail.)
func (m *Mapper) putCall(k callKey, c *call) {
	if _, ok := m.calls[k]; !ok {
		if m.callRing == nil {
			m.callRing = make([]callKey, maxCalls)
		}
		if old := m.callRing[m.callNext]; old != (callKey{}) {
			delete(m.calls, old)
		}
		m.callRing[m.callNext] = k
		m.callNext = (m.callNext + 1) % maxCalls
	}
	m.calls[k] = c
}

// session returns a session's state, forgetting the oldest beyond
// maxSessions.
func (m *Mapper) session(id string) *sessionState {
	id, _ = clip(id, MaxName)
	if s := m.sessions[id]; s != nil {
		return s
	}
	s := &sessionState{}
	if m.sessRing == nil {
		m.sessRing = make([]string, maxSessions)
	}
	if old := m.sessRing[m.sessNext]; old != "" || len(m.sessions) >= maxSessions {
		delete(m.sessions, old)
	}
	m.sessions[id] = s
	m.sessRing[m.sessNext] = id
	m.sessNext = (m.sessNext + 1) % maxSessions
	return s
}

// otr reports whether a session is off the record: nothing of its
// content is copied out, whatever form it has in the ledger.
func (m *Mapper) otr(session string) bool {
	s, _ := clip(session, MaxName)
	st := m.sessions[s]
	return st != nil && st.mode == "otr"
}

// text is a recorded text as an event may show it: "" when withheld or
// off the record, else clipped to n.
func (m *Mapper) text(session, s string, n int) (string, bool) {
	if withheld(s) || m.otr(session) {
		return "", false
	}
	return clip(s, n)
}

// base fills what every event has, for a class and activity.
func (m *Mapper) base(e *ledger.Entry, cl class, activity int, profiles ...string) Event {
	ev := Event{
		ActivityID: activity, ActivityName: cl.activities[activity],
		CategoryUID: cl.category, CategoryName: categoryNames[cl.category],
		ClassUID: cl.uid, ClassName: cl.name,
		TypeUID: int64(cl.uid)*100 + int64(activity), TypeName: cl.name + ": " + cl.activities[activity],
		SeverityID: 1, Severity: "Informational",
		Metadata: Metadata{
			Version:      SchemaVersion,
			Product:      Product{Name: "opx", VendorName: "opx", Version: m.version},
			OriginalTime: e.TS,
			LogName:      "opx ledger " + m.o.LedgerID,
			Profiles:     append([]string{"host", "security_control", "record_integrity"}, profiles...),
		},
		Device:   m.host,
		Unmapped: &Unmapped{OPX: OPXFacts{Seq: e.Seq, EntryType: e.Type}},
	}
	if t, err := time.Parse(time.RFC3339Nano, e.TS); err == nil {
		ev.Time = t.UnixMilli()
	}
	ev.Metadata.OriginalTime, _ = clip(e.TS, 64)
	if e.Session != "" {
		s, _ := clip(e.Session, MaxName)
		ev.Unmapped.OPX.Session = s
		ev.Actor = &Actor{AppName: "", Session: &Session{UID: s}}
	}
	return ev
}

// agent is the AI agent acting in a session (or its sub-agent).
func (m *Mapper) agent(session, subagent string) *AIAgent {
	s, _ := clip(session, MaxName)
	st := m.sessions[s]
	mode := ""
	var md *AIModel
	if st != nil {
		mode, md = st.mode, st.model
	}
	a := &AIAgent{Name: "opx agent", UID: "opx-agent", TypeID: 1, Type: "Native"}
	switch mode {
	case event.ModeClaudeCode, event.ModeCodex, event.ModeGeminiCLI:
		a = &AIAgent{Name: mode, UID: mode, TypeID: 99, Type: "Other"}
	case "mcp-proxy":
		a = &AIAgent{Name: "MCP client (opx mcp-proxy)", UID: "mcp-proxy-client", TypeID: 99, Type: "Other"}
	default:
		if md == nil {
			md = m.model
		}
	}
	a.AIModel = md
	a.InstanceUID = s
	if subagent != "" {
		sa, _ := clip(subagent, MaxName)
		a.InstanceUID = s + "/" + sa
		a.Name += " (sub-agent)"
	}
	return a
}

// actorOf sets the actor and the AI agent of an activity event.
func (m *Mapper) actorOf(ev *Event, session, subagent string) {
	a := m.agent(session, subagent)
	ev.AIAgent = a
	if ev.Actor == nil {
		ev.Actor = &Actor{}
	}
	ev.Actor.AppName = a.Name
}
