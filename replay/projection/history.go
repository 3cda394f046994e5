package projection

import (
	"bytes"
	"encoding/json"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// Message is one message of a session's history.
type Message struct {
	ID       string          `json:"id"`
	Role     string          `json:"role"` // user or assistant
	Content  string          `json:"content"`
	TS       string          `json:"ts"`
	Seq      uint64          `json:"seq"`
	Client   string          `json:"client,omitempty"`
	Thoughts []event.Thought `json:"thoughts,omitempty"`
	Usage    event.Usage     `json:"usage"`
}

// History keeps each session's messages in order: key session NUL
// 8-byte seq.
type History struct{}

func (History) Name() string    { return "history" }
func (History) Version() string { return "1" }

func (History) Apply(b ledger.Bucket, e *ledger.Entry) error {
	if e.Session == "" {
		return nil
	}
	var m Message
	switch e.Type {
	case event.TypeClientMessage:
		m = Message{ID: str(e, "message_id"), Role: "user", Content: str(e, "content"), Client: str(e, "client")}
	case event.TypeResponseComplete:
		in, out, total := usage(e)
		m = Message{ID: str(e, "message_id") + "/answer", Role: "assistant", Content: str(e, "content"),
			Usage: event.Usage{InputTokens: in, OutputTokens: out, TotalTokens: total}}
		if raw, ok := ledger.Field(e.Data, "thoughts"); ok && len(raw) > 2 {
			if err := json.Unmarshal(raw, &m.Thoughts); err != nil {
				return nil
			}
		}
	default:
		return nil
	}
	m.TS, m.Seq = e.TS, e.Seq
	return putJSON(b, seqKey(e.Seq, e.Session), &m)
}

// ReadHistory returns a session's messages, oldest first, skipping
// offset and returning at most limit (0: all).
func ReadHistory(b ledger.Bucket, session string, offset, limit int) []Message {
	prefix := append(key(session), 0)
	var out []Message
	c := b.Cursor()
	i := 0
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) && len(k) == len(prefix)+8; k, v = c.Next() {
		if i++; i <= offset {
			continue
		}
		var m Message
		if jsonUnmarshal(v, &m) == nil {
			out = append(out, m)
		}
		if limit > 0 && len(out) == limit {
			break
		}
	}
	return out
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
