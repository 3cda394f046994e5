package projection

import (
	"bytes"
	"encoding/binary"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// Session is one session as the sessions projection keeps it.
type Session struct {
	ID       string `json:"id"`
	Title    string `json:"title"`
	Mode     string `json:"mode"`
	Created  string `json:"created"` // ts of session.created
	Updated  string `json:"updated"` // ts of the last message either way
	Messages int    `json:"messages"`
	FirstSeq uint64 `json:"first_seq"`
	LastSeq  uint64 `json:"last_seq"` // the last message, answer or agent error
	// SubAgents counts the sub-agents the session's agent spawned, by how
	// they ended (the rest are running, or their engine died).
	SubAgents SubAgentCounts `json:"subagents"`
}

// SubAgentCounts counts sub-agents: spawned, and by the entry that ended
// each.
type SubAgentCounts struct {
	Spawned   int `json:"spawned"`
	Completed int `json:"completed"`
	Failed    int `json:"failed"`
	Cancelled int `json:"cancelled"`
	TimedOut  int `json:"timed_out"`
}

// Running is the sub-agents without an end.
func (c SubAgentCounts) Running() int {
	return c.Spawned - c.Completed - c.Failed - c.Cancelled - c.TimedOut
}

// subAgentSlot is each count's place in the sub-agent record.
var subAgentSlot = map[string]int{event.TypeSubAgentSpawned: 0, event.TypeSubAgentCompleted: 1, event.TypeSubAgentFailed: 2,
	event.TypeSubAgentCancelled: 3, event.TypeSubAgentTimedOut: 4}

// Sessions keeps each session under its id: what session.created and
// session.titled say as JSON, under id NUL "m" its activity as 24
// bytes (messages, last seq, and the ts of the last message after them;
// an mcp-proxy session's messages are its client's tools/call requests
// and their answers, mcp.request and mcp.response),
// so that the message after message of a busy session costs no JSON, and
// under id NUL "a" its sub-agents as five 8-byte counts (spawned,
// completed, failed, cancelled, timed out), once it has any.
type Sessions struct{}

func (Sessions) Name() string    { return "sessions" }
func (Sessions) Version() string { return "4" }

// sessionInfo is the JSON part.
type sessionInfo struct {
	ID       string `json:"id"`
	Title    string `json:"title"`
	Mode     string `json:"mode"`
	Created  string `json:"created"`
	FirstSeq uint64 `json:"first_seq"`
}

func (Sessions) Apply(b ledger.Bucket, e *ledger.Entry) error {
	if e.Session == "" {
		return nil
	}
	k := []byte(e.Session)
	switch e.Type {
	case event.TypeSessionCreated:
		if err := putJSON(b, k, &sessionInfo{ID: e.Session, Title: str(e, "title"), Mode: str(e, "mode"), Created: e.TS, FirstSeq: e.Seq}); err != nil {
			return err
		}
		return b.Put(activityKey(e.Session), activity(0, e.Seq, e.TS))
	case event.TypeSessionTitled:
		var s sessionInfo
		if !getJSON(b, k, &s) {
			return nil
		}
		s.Title = str(e, "title")
		return putJSON(b, k, &s)
	case event.TypeClientMessage, event.TypeResponseComplete, event.TypeAgentError, event.TypeMCPRequest, event.TypeMCPResponse:
		if e.Type != event.TypeClientMessage && str(e, "subagent_id") != "" {
			return nil // a sub-agent's answer or error is not a message of the session
		}
		if (e.Type == event.TypeMCPRequest || e.Type == event.TypeMCPResponse) && str(e, "method") != "tools/call" {
			return nil // an mcp-proxy session's messages are its client's tool calls and their answers
		}
		ak := activityKey(e.Session)
		v := b.Get(ak)
		if len(v) < 16 {
			return nil // no session.created: not a session opx knows
		}
		n, ts := binary.BigEndian.Uint64(v), string(v[16:])
		if e.Type != event.TypeAgentError {
			n, ts = n+1, e.TS
		}
		return b.Put(ak, activity(n, e.Seq, ts))
	case event.TypeSubAgentSpawned, event.TypeSubAgentCompleted, event.TypeSubAgentFailed, event.TypeSubAgentCancelled,
		event.TypeSubAgentTimedOut:
		if b.Get(k) == nil {
			return nil // no session.created: not a session opx knows
		}
		sk := subAgentsKey(e.Session)
		v := make([]byte, 40)
		copy(v, b.Get(sk))
		i := subAgentSlot[e.Type] * 8
		binary.BigEndian.PutUint64(v[i:], binary.BigEndian.Uint64(v[i:])+1)
		return b.Put(sk, v)
	}
	return nil
}

func subAgentsKey(session string) []byte { return key(session, "a") }

func activityKey(session string) []byte { return key(session, "m") }

func activity(messages, lastSeq uint64, updated string) []byte {
	v := binary.BigEndian.AppendUint64(nil, messages)
	v = binary.BigEndian.AppendUint64(v, lastSeq)
	return append(v, updated...)
}

func readSession(b ledger.Bucket, id string) (Session, bool) {
	var info sessionInfo
	if !getJSON(b, []byte(id), &info) {
		return Session{}, false
	}
	s := Session{ID: info.ID, Title: info.Title, Mode: info.Mode, Created: info.Created, Updated: info.Created,
		FirstSeq: info.FirstSeq, LastSeq: info.FirstSeq}
	if v := b.Get(activityKey(id)); len(v) >= 16 {
		s.Messages, s.LastSeq, s.Updated = int(binary.BigEndian.Uint64(v)), binary.BigEndian.Uint64(v[8:]), string(v[16:])
	}
	if v := b.Get(subAgentsKey(id)); len(v) == 40 {
		n := func(i int) int { return int(binary.BigEndian.Uint64(v[i*8:])) }
		s.SubAgents = SubAgentCounts{Spawned: n(0), Completed: n(1), Failed: n(2), Cancelled: n(3), TimedOut: n(4)}
	}
	return s, true
}

// ReadSessions returns every session, in id order.
func ReadSessions(b ledger.Bucket) []Session {
	var out []Session
	c := b.Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		if bytes.IndexByte(k, 0) >= 0 {
			continue // an activity or sub-agent record
		}
		if s, ok := readSession(b, string(k)); ok {
			out = append(out, s)
		}
	}
	return out
}

// ReadSession returns one session.
func ReadSession(b ledger.Bucket, id string) (Session, bool) { return readSession(b, id) }
