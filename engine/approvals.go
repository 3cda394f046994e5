package engine

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/opx-dev/opx/engine/auth"
	"github.com/opx-dev/opx/engine/judge"
	"github.com/opx-dev/opx/internal/textclip"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// DefaultApprovalTimeout is how long an escalation waits for a human when
// the configuration sets no timeout.
const DefaultApprovalTimeout = 5 * time.Minute

// ErrUnknownApproval is returned by Approvals.Resolve for an approval id
// that is not pending: never requested, or already resolved (by a client,
// the timeout or the engine stopping).
var ErrUnknownApproval = errors.New("no pending approval with this id")

// Approvals holds the escalations waiting for a human (tier 3). Whoever
// resolves an approval records approval.resolved (Sync) before the waiting
// call learns the answer, so the answer is durable before anything runs.
//
// # Invariants
//
//   - Each approval is resolved exactly once: a client, the timeout and the
//     engine stopping race for it under one lock, and only the winner
//     records.
//   - approval.requested is durable before the approval can be found or
//     answered, so approval.resolved always follows it in the ledger.
//   - After DenyAll no approval waits: new requests are denied at once.
type Approvals struct {
	rec     *Recorder
	timeout time.Duration
	// publish, if set, tells the session's clients (approval_requested,
	// approval_resolved).
	publish func(session, messageID, typ string, seq uint64, data any)
	// id, if set, names a new approval instead of a random "apr_" id (an
	// engine in replay mode reuses the recorded ids: engine/redrive).
	id func(p judge.Proposal) string

	mu      sync.Mutex
	pending map[string]*approval
	closed  string // why new requests are denied at once; "" while open
	// closedFor are the sub-agents (session, id) whose new requests are
	// denied at once: they have ended (DenySubAgent); id "" is the
	// session's own calls (an mcp-proxy session that ended).
	closedFor map[[2]string]string
}

// PendingApproval is an escalation waiting for a human.
type PendingApproval struct {
	ID         string
	Session    string
	SubAgentID string // the sub-agent whose call asks; "" the session's agent
	MessageID  string
	CallID     string
	Tool       string
	Arguments  string // canonical JSON
	Reason     string // why it was escalated
	Requested  time.Time
	Timeout    time.Duration
	RequestSeq uint64 // seq of approval.requested
}

// ApprovalOutcome is how an approval was resolved.
type ApprovalOutcome struct {
	ApprovalID string
	SubAgentID string // the sub-agent whose call it was; "" the session's agent
	CallID     string
	Tool       string
	Approved   bool
	By         string // the client's name, "timeout" or "engine"
	Reason     string
	Seq        uint64 // seq of approval.resolved
}

type approval struct {
	PendingApproval
	timer  *time.Timer
	answer chan approvalAnswer // buffered: the resolver never blocks
	done   chan struct{}       // closed once the waiter has recorded its verdict
}

type approvalAnswer struct {
	out ApprovalOutcome
	err error
}

// NewApprovals returns an empty set of approvals recording into rec.
// timeout <= 0 means DefaultApprovalTimeout.
func NewApprovals(rec *Recorder, timeout time.Duration, publish func(session, messageID, typ string, seq uint64, data any)) *Approvals {
	switch {
	case timeout <= 0:
		timeout = DefaultApprovalTimeout
	case timeout < time.Millisecond:
		timeout = time.Millisecond // approval.requested records whole milliseconds, at least one
	}
	return &Approvals{rec: rec, timeout: timeout, publish: publish, pending: map[string]*approval{}}
}

// Recorded makes an engine in replay mode (engine/redrive) name each new
// approval as the record named it (id) and resolve it as the record
// answered it (answer), the moment it is asked: the id is in the answer
// the agent reads, so in the next request body. Call it before the engine
// runs.
func (a *Approvals) Recorded(id func(p judge.Proposal) string, answer func(a *Approvals, id string)) {
	a.id = id
	publish := a.publish
	a.publish = func(session, messageID, typ string, seq uint64, data any) {
		if publish != nil {
			publish(session, messageID, typ, seq, data)
		}
		if m, ok := data.(map[string]any); ok && typ == "approval_requested" {
			id, _ := m["approval_id"].(string)
			answer(a, id)
		}
	}
}

// Ask records approval.requested for p, tells the session's clients and
// waits for the answer. then runs with the outcome before Ask returns and
// before DenyAll stops waiting for it (the pipeline records its tier 3
// verdict there). The error is non-nil only when the ledger failed.
func (a *Approvals) Ask(ctx context.Context, p judge.Proposal, reason string, then func(ApprovalOutcome) error) (ApprovalOutcome, error) {
	tok, err := auth.NewToken()
	if err != nil {
		return ApprovalOutcome{}, err
	}
	id := "apr_" + tok[:16]
	if a.id != nil {
		id = a.id(p)
	}
	ap := &approval{PendingApproval: PendingApproval{ID: id, Session: p.Session, SubAgentID: p.SubAgentID, MessageID: p.MessageID, CallID: p.CallID,
		Tool: p.Tool, Arguments: string(p.Args), Reason: reason, Requested: time.Now(), Timeout: a.timeout},
		answer: make(chan approvalAnswer, 1), done: make(chan struct{})}
	defer close(ap.done)
	seq, err := a.rec.Record(context.WithoutCancel(ctx), ledger.Sync, p.Session, &event.ApprovalRequested{ApprovalID: ap.ID, SubAgentID: p.SubAgentID, MessageID: p.MessageID,
		CallID: p.CallID, Tool: p.Tool, Arguments: string(p.Args), Reason: reason, TimeoutMS: a.timeout.Milliseconds()})
	if err != nil {
		return ApprovalOutcome{}, err
	}
	ap.RequestSeq = seq
	a.mu.Lock()
	a.pending[ap.ID] = ap
	closed := a.closed
	if closed == "" {
		closed = a.closedFor[[2]string{p.Session, p.SubAgentID}]
	}
	if closed == "" {
		id := ap.ID
		ap.timer = time.AfterFunc(a.timeout, func() {
			_, _ = a.Resolve(id, false, "timeout", fmt.Sprintf("no human answered within %s", a.timeout))
		})
	}
	a.mu.Unlock()
	if closed != "" {
		_, _ = a.Resolve(ap.ID, false, "engine", closed)
	} else if a.publish != nil {
		a.publish(p.Session, p.MessageID, "approval_requested", seq, map[string]any{"approval_id": ap.ID, "call_id": p.CallID, "subagent_id": p.SubAgentID,
			"tool": p.Tool, "arguments": textclip.Cut(string(p.Args), 4096), "reason": reason, "timeout_ms": a.timeout.Milliseconds(),
			"expires_at": ap.Requested.Add(a.timeout).UnixNano()})
	}
	var ans approvalAnswer
	select {
	case ans = <-ap.answer:
	case <-ctx.Done():
		// Resolve fails only if someone else is resolving it right now;
		// their answer arrives either way.
		_, _ = a.Resolve(ap.ID, false, "engine", "the call was cancelled: "+context.Cause(ctx).Error())
		ans = <-ap.answer
	}
	if ans.err != nil {
		return ans.out, ans.err
	}
	if then != nil {
		if err := then(ans.out); err != nil {
			return ans.out, err
		}
	}
	return ans.out, nil
}

// Resolve answers a pending approval: it records approval.resolved (Sync)
// and then releases the waiting call. by names who answered. It returns
// ErrUnknownApproval for an id that is not pending, and a ledger error if
// the answer could not be recorded (the waiting call then fails too).
func (a *Approvals) Resolve(id string, approved bool, by, reason string) (ApprovalOutcome, error) {
	a.mu.Lock()
	ap := a.pending[id]
	if ap == nil {
		a.mu.Unlock()
		return ApprovalOutcome{}, fmt.Errorf("%w: %q", ErrUnknownApproval, textclip.Cut(id, 128))
	}
	delete(a.pending, id)
	if ap.timer != nil {
		ap.timer.Stop()
	}
	a.mu.Unlock()
	if by == "timeout" {
		approved = false
	}
	out := ApprovalOutcome{ApprovalID: id, SubAgentID: ap.SubAgentID, CallID: ap.CallID, Tool: ap.Tool, Approved: approved, By: by, Reason: reason}
	seq, err := a.rec.Record(context.Background(), ledger.Sync, ap.Session, &event.ApprovalResolved{ApprovalID: id, SubAgentID: ap.SubAgentID, CallID: ap.CallID,
		Approved: approved, By: by, Reason: reason})
	out.Seq = seq
	ap.answer <- approvalAnswer{out, err}
	if err != nil {
		return out, err
	}
	if a.publish != nil {
		a.publish(ap.Session, ap.MessageID, "approval_resolved", seq, map[string]any{"approval_id": id, "call_id": ap.CallID, "subagent_id": ap.SubAgentID,
			"tool": ap.Tool, "approved": approved, "by": by, "reason": reason})
	}
	return out, nil
}

// DenyAll denies every pending approval (by "engine", with reason) and
// every later request, and waits (up to wait) until the calls that were
// waiting have recorded their verdicts, so a stopping engine records them
// before engine.stopped.
func (a *Approvals) DenyAll(reason string, wait time.Duration) {
	a.mu.Lock()
	a.closed = reason
	aps := make([]*approval, 0, len(a.pending))
	for _, ap := range a.pending {
		aps = append(aps, ap)
	}
	a.mu.Unlock()
	sort.Slice(aps, func(i, j int) bool { return aps[i].RequestSeq < aps[j].RequestSeq })
	for _, ap := range aps {
		_, _ = a.Resolve(ap.ID, false, "engine", reason)
	}
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	for _, ap := range aps {
		select {
		case <-ap.done:
		case <-deadline.C:
			return
		}
	}
}

// DenySubAgent denies the pending approvals of a sub-agent's calls, and
// any it asks later (by "engine", with reason): it has ended, so no answer
// can matter. With subagent "" it does so for the session's own calls (an
// mcp-proxy session whose client left).
func (a *Approvals) DenySubAgent(session, subagent, reason string) {
	a.mu.Lock()
	if a.closedFor == nil {
		a.closedFor = map[[2]string]string{}
	}
	a.closedFor[[2]string{session, subagent}] = reason
	var aps []*approval
	for _, ap := range a.pending {
		if ap.Session == session && ap.SubAgentID == subagent {
			aps = append(aps, ap)
		}
	}
	a.mu.Unlock()
	sort.Slice(aps, func(i, j int) bool { return aps[i].RequestSeq < aps[j].RequestSeq })
	for _, ap := range aps {
		_, _ = a.Resolve(ap.ID, false, "engine", reason)
	}
}

// tier3Verdict is the verdict a human's answer (or its absence) amounts to.
func tier3Verdict(o ApprovalOutcome) judge.Verdict {
	switch {
	case o.Approved:
		r := fmt.Sprintf("approved by %s (%s)", o.By, o.ApprovalID)
		if o.Reason != "" {
			r += ": " + o.Reason
		}
		return judge.Verdict{Decision: event.Allow, Tier: 3, Rule: "tier3:approved", Reason: r}
	case o.By == "timeout":
		return judge.Verdict{Decision: event.Block, Tier: 3, Rule: "tier3:timeout", Reason: fmt.Sprintf("denied: %s (%s)", o.Reason, o.ApprovalID)}
	case o.By == "engine":
		return judge.Verdict{Decision: event.Block, Tier: 3, Rule: "tier3:unanswered", Reason: fmt.Sprintf("denied: %s (%s)", o.Reason, o.ApprovalID)}
	default:
		r := fmt.Sprintf("denied by a human: %s (%s)", o.By, o.ApprovalID)
		if o.Reason != "" {
			r += ": " + o.Reason
		}
		return judge.Verdict{Decision: event.Block, Tier: 3, Rule: "tier3:denied", Reason: r}
	}
}
