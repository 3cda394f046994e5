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
}

// Sessions keeps each session under its id: what session.created and
// session.titled say as JSON, and under id NUL "m" its activity as 24
// bytes (messages, last seq, and the ts of the last message after them),
// so that the message after message of a busy session costs no JSON.
type Sessions struct{}

func (Sessions) Name() string    { return "sessions" }
func (Sessions) Version() string { return "2" }

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
	case event.TypeClientMessage, event.TypeResponseComplete, event.TypeAgentError:
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
	}
	return nil
}

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
	return s, true
}

// ReadSessions returns every session, in id order.
func ReadSessions(b ledger.Bucket) []Session {
	var out []Session
	c := b.Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		if bytes.IndexByte(k, 0) >= 0 {
			continue // an activity record
		}
		if s, ok := readSession(b, string(k)); ok {
			out = append(out, s)
		}
	}
	return out
}

// ReadSession returns one session.
func ReadSession(b ledger.Bucket, id string) (Session, bool) { return readSession(b, id) }
