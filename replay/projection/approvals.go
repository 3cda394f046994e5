package projection

import (
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// Approval is one escalation to a human and its answer.
type Approval struct {
	ID           string `json:"id"`
	Session      string `json:"session"`
	CallID       string `json:"call_id"`
	Tool         string `json:"tool"`
	Reason       string `json:"reason"`
	TimeoutMS    int64  `json:"timeout_ms"`
	RequestedSeq uint64 `json:"requested_seq"`
	RequestedTS  string `json:"requested_ts"`
	ResolvedSeq  uint64 `json:"resolved_seq,omitempty"` // 0 while pending
	Approved     bool   `json:"approved"`
	By           string `json:"by,omitempty"`
}

// Approvals keys each approval by its id.
type Approvals struct{}

func (Approvals) Name() string    { return "approvals" }
func (Approvals) Version() string { return "1" }

func (Approvals) Apply(b ledger.Bucket, e *ledger.Entry) error {
	switch e.Type {
	case event.TypeApprovalRequested:
		var p event.ApprovalRequested
		if !decode(e, &p) {
			return nil
		}
		return putJSON(b, []byte(p.ApprovalID), &Approval{ID: p.ApprovalID, Session: e.Session, CallID: p.CallID, Tool: p.Tool,
			Reason: p.Reason, TimeoutMS: p.TimeoutMS, RequestedSeq: e.Seq, RequestedTS: e.TS})
	case event.TypeApprovalResolved:
		var p event.ApprovalResolved
		var a Approval
		if !decode(e, &p) || !getJSON(b, []byte(p.ApprovalID), &a) {
			return nil
		}
		a.ResolvedSeq, a.Approved, a.By = e.Seq, p.Approved, p.By
		return putJSON(b, []byte(p.ApprovalID), &a)
	}
	return nil
}

// ReadApprovals returns every approval, or only the pending ones, in id
// order.
func ReadApprovals(b ledger.Bucket, pendingOnly bool) []Approval {
	var out []Approval
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		var a Approval
		if jsonUnmarshal(v, &a) == nil && (!pendingOnly || a.ResolvedSeq == 0) {
			out = append(out, a)
		}
	}
	return out
}
