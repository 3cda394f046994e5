package projection

import (
	"sort"
	"time"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// Approval is one escalation to a human and its answer.
type Approval struct {
	ID      string `json:"id"`
	Session string `json:"session"`
	// SubAgentID is the sub-agent whose call asks ("" the session's own
	// agent).
	SubAgentID   string `json:"subagent_id,omitempty"`
	MessageID    string `json:"message_id,omitempty"`
	CallID       string `json:"call_id"`
	Tool         string `json:"tool"`
	Arguments    string `json:"arguments,omitempty"`
	Reason       string `json:"reason"`
	TimeoutMS    int64  `json:"timeout_ms"`
	RequestedSeq uint64 `json:"requested_seq"`
	RequestedTS  string `json:"requested_ts"`
	ResolvedSeq  uint64 `json:"resolved_seq,omitempty"` // 0 while pending
	ResolvedTS   string `json:"resolved_ts,omitempty"`
	Approved     bool   `json:"approved"`
	By           string `json:"by,omitempty"`
	Answer       string `json:"answer,omitempty"` // the reason given with the answer
}

// Pending reports whether no answer is recorded.
func (a *Approval) Pending() bool { return a.ResolvedSeq == 0 }

// Expires is when the engine that asked denies it unless answered.
func (a *Approval) Expires() time.Time {
	t, err := time.Parse(time.RFC3339Nano, a.RequestedTS)
	if err != nil {
		return time.Time{}
	}
	return t.Add(time.Duration(a.TimeoutMS) * time.Millisecond)
}

// Approvals keys each approval by its id. Version 3 keeps the asking
// sub-agent.
type Approvals struct{}

func (Approvals) Name() string    { return "approvals" }
func (Approvals) Version() string { return "3" }

func (Approvals) Apply(b ledger.Bucket, e *ledger.Entry) error {
	switch e.Type {
	case event.TypeApprovalRequested:
		var p event.ApprovalRequested
		if !decode(e, &p) {
			return nil
		}
		return putJSON(b, []byte(p.ApprovalID), &Approval{ID: p.ApprovalID, Session: e.Session, SubAgentID: p.SubAgentID, MessageID: p.MessageID,
			CallID: p.CallID, Tool: p.Tool, Arguments: p.Arguments, Reason: p.Reason, TimeoutMS: p.TimeoutMS,
			RequestedSeq: e.Seq, RequestedTS: e.TS})
	case event.TypeApprovalResolved:
		var p event.ApprovalResolved
		var a Approval
		if !decode(e, &p) || !getJSON(b, []byte(p.ApprovalID), &a) {
			return nil
		}
		a.ResolvedSeq, a.ResolvedTS, a.Approved, a.By, a.Answer = e.Seq, e.TS, p.Approved, p.By, p.Reason
		return putJSON(b, []byte(p.ApprovalID), &a)
	}
	return nil
}

// ReadApprovals returns the approvals of a session ("" for every
// session), or only the pending ones, oldest request first.
func ReadApprovals(b ledger.Bucket, session string, pendingOnly bool) []Approval {
	var out []Approval
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		var a Approval
		if jsonUnmarshal(v, &a) == nil && (!pendingOnly || a.Pending()) && (session == "" || a.Session == session) {
			out = append(out, a)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].RequestedSeq < out[j].RequestedSeq })
	return out
}
