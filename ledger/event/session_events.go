package event

import (
	"errors"
	"strings"
)

// Types of the session area.
const (
	TypeSessionCreated = "session.created"
	TypeSessionTitled  = "session.titled"
	TypeClientMessage  = "client.message"
	// TypeClientRejected extends the DESIGN taxonomy: a client call refused
	// for a missing or wrong token is evidence too.
	TypeClientRejected = "client.rejected"
)

func init() {
	register(func() Payload { return &SessionCreated{} })
	register(func() Payload { return &SessionTitled{} })
	register(func() Payload { return &ClientMessage{} })
	register(func() Payload { return &ClientRejected{} })
}

// SessionCreated opens a session; the entry's session field is its id.
// Sub-agent sessions name their parent.
type SessionCreated struct {
	// Mode is normal, otr, mcp-proxy, or for an agent audited through
	// its hooks claude-code, codex or gemini-cli (hook_events.go).
	Mode          string `json:"mode"`
	Title         string `json:"title,omitempty"`
	ParentSession string `json:"parent_session,omitempty"`
	SubAgentID    string `json:"subagent_id,omitempty"`
}

func (*SessionCreated) Type() string { return TypeSessionCreated }

func (s *SessionCreated) Validate() error {
	return oneOf("mode", s.Mode, "normal", "otr", "mcp-proxy", ModeClaudeCode, ModeCodex, ModeGeminiCLI)
}

// SessionTitled sets or changes a session's title.
type SessionTitled struct {
	Title string `json:"title"`
}

func (*SessionTitled) Type() string { return TypeSessionTitled }

func (s *SessionTitled) Validate() error { return need("title", s.Title) }

// ClientMessage records a user message as a client sent it.
type ClientMessage struct {
	MessageID string `json:"message_id"`
	Content   string `json:"content"`
	Client    string `json:"client,omitempty"` // e.g. "opx send", "opx chat"
	// Traceparent is the W3C trace context the client sent (opx send
	// passes its TRACEPARENT): the turn's span is its child in the
	// telemetry opx exports. Absent when none was sent.
	Traceparent string `json:"traceparent,omitempty"`
}

func (*ClientMessage) Type() string { return TypeClientMessage }

func (m *ClientMessage) Validate() error {
	if m.Traceparent != "" && !ValidTraceparent(m.Traceparent) {
		return errors.New("traceparent is not a W3C traceparent (00-<32 hex>-<16 hex>-<2 hex>)")
	}
	return need("message_id", m.MessageID, "content", m.Content)
}

// ValidTraceparent reports whether s is a W3C traceparent of version 00
// with a trace id and a span id that are not all zeros, in lower case.
func ValidTraceparent(s string) bool {
	if len(s) != 55 || s[:3] != "00-" || s[35] != '-' || s[52] != '-' {
		return false
	}
	tid, sid, fl := s[3:35], s[36:52], s[53:]
	return isLowerHex(tid, 32) && isLowerHex(sid, 16) && isLowerHex(fl, 2) &&
		tid != strings.Repeat("0", 32) && sid != strings.Repeat("0", 16)
}

// ClientRejected records client calls refused for their token. The engine
// records at most one per second; Suppressed counts the refusals since the
// last entry that were not recorded one by one.
type ClientRejected struct {
	Method     string `json:"method"`
	Reason     string `json:"reason"`
	Peer       string `json:"peer"`
	Suppressed int    `json:"suppressed"`
}

func (*ClientRejected) Type() string { return TypeClientRejected }

func (c *ClientRejected) Validate() error {
	if c.Suppressed < 0 {
		return errors.New("suppressed must not be negative")
	}
	return need("method", c.Method, "reason", c.Reason)
}
