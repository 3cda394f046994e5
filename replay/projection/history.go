package projection

import (
	"bytes"
	"encoding/json"
	"fmt"

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
// 8-byte seq. In a session of an agent audited through its hooks, the
// user's prompts are its client messages and the model's answers the
// last message of each of its turns (hook.event of kind stop), with no
// usage: its model calls did not pass through opx.
type History struct{}

func (History) Name() string    { return "history" }
func (History) Version() string { return "3" }

func (History) Apply(b ledger.Bucket, e *ledger.Entry) error {
	if e.Session == "" {
		return nil
	}
	if f := ledger.Fields(e.Data, "subagent_id"); len(f[0]) > 2 {
		// A sub-agent's answer is its parent's tool result (agent_result),
		// not a message of the session.
		return nil
	}
	var m Message
	switch e.Type {
	case event.TypeClientMessage:
		f := ledger.Fields(e.Data, "client", "content", "message_id")
		m = Message{ID: ledger.RawString(f[2]), Role: "user", Content: ledger.RawString(f[1]), Client: ledger.RawString(f[0])}
	case event.TypeResponseComplete:
		f := ledger.Fields(e.Data, "content", "message_id", "thoughts", "usage")
		u := ledger.Fields(f[3], "input_tokens", "output_tokens", "total_tokens")
		m = Message{ID: ledger.RawString(f[1]) + "/answer", Role: "assistant", Content: ledger.RawString(f[0]),
			Usage: event.Usage{InputTokens: ledger.RawInt(u[0]), OutputTokens: ledger.RawInt(u[1]), TotalTokens: ledger.RawInt(u[2])}}
		if len(f[2]) > 2 {
			if err := json.Unmarshal(f[2], &m.Thoughts); err != nil {
				return nil
			}
		}
	case event.TypeHookEvent:
		f := ledger.Fields(e.Data, "kind", "text", "text_blob", "size")
		if ledger.RawString(f[0]) != "stop" {
			return nil
		}
		m = Message{ID: fmt.Sprintf("stop-%d/answer", e.Seq), Role: "assistant", Content: ledger.RawString(f[1])}
		if blob := ledger.RawString(f[2]); blob != "" {
			m.Content = fmt.Sprintf("[the model's last message: %d bytes, kept as blob %s]", ledger.RawInt(f[3]), blob)
		}
		if m.Content == "" {
			return nil
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
