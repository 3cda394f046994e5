package redrive

import (
	"encoding/json"

	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/engine/judge"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/replay/rerun"
)

// How a rerun re-enacts a sub-agent's end that hung on timing.
//
// A sub-agent cancelled by its parent, timed out or killed while it was
// waiting (for a model's answer, a command, a human) left a record whose
// thread goes on past its end entry: the answer, the command's result or
// the denial arrived after it. Served from the record, the rerun's
// sub-agent would not wait: it would go past the point where the record
// ended it. So, where a sub-agent's thread reaches something its record
// shows after its end (a hold), the rerun waits there until its sub-agent
// has ended too, and ends it itself the way the record says when nothing
// else would: a timeout (its timer fires at once), a crash (its process
// is killed). A cancel comes from the parent's cancel_agent, which runs
// live and waits, in turn, until the sub-agent it cancels is held, so the
// cancel lands where it landed in the record. What the record shows after
// the end is then produced after it: the model's answer, the command's
// result; an approval is left to the end's own denial.

// subEnd is a recorded sub-agent's end other than a completion, with
// whether its thread holds anything recorded after it.
type subEnd struct {
	seq  uint64
	end  event.Payload
	held chan struct{} // closed when the rerun's sub-agent reaches its hold
	hold bool          // the record shows a hold: something after the end
	// cancelSeq is the recorded proposal of the parent's cancel_agent
	// that ended it, for a cancel.
	cancelSeq uint64
}

// newSubEnds collects the recorded sub-agents that did not complete and
// whether each has a hold.
func newSubEnds(rec *rerun.Recording) map[string]*subEnd {
	cancels := map[string]uint64{} // the parent's cancel_agent proposals, by call id
	for _, p := range rec.Proposals {
		if p.SubAgentID == "" && p.Tool == "cancel_agent" {
			cancels[p.CallID] = p.Seq
		}
	}
	out := map[string]*subEnd{}
	for _, sa := range rec.SubAgents {
		e := &subEnd{seq: sa.EndSeq, end: sa.End, held: make(chan struct{})}
		switch x := sa.End.(type) {
		case *event.SubAgentTimedOut:
		case *event.SubAgentFailed:
			if x.Reason != event.SubAgentCrashed {
				continue // the engine's own decision: it comes again where it came
			}
		case *event.SubAgentCancelled:
			// Only a cancel by the parent's recorded call is awaited: no
			// one else would come to end it.
			if e.cancelSeq = cancels[x.ByCallID]; e.cancelSeq == 0 {
				continue
			}
		default:
			continue
		}
		out[sa.SubAgentID] = e
	}
	after := func(id string, seq uint64) {
		if e := out[id]; e != nil && (seq == 0 || seq > e.seq) {
			e.hold = true
		}
	}
	for _, c := range rec.Calls {
		if c.SubAgentID != "" {
			after(c.SubAgentID, c.ResponseSeq)
		}
	}
	for _, p := range rec.Proposals {
		if p.SubAgentID != "" && p.Started {
			after(p.SubAgentID, p.DoneSeq)
		}
	}
	for _, a := range rec.Approvals {
		if a.Requested.SubAgentID != "" {
			after(a.Requested.SubAgentID, a.ResolvedSeq)
		}
	}
	return out
}

// heldAt reports whether sub-agent id's recorded thread has seq (0: never
// recorded) after its end: there the rerun holds it.
func (s *replayState) heldAt(id string, seq uint64) bool {
	e := s.ends[id]
	return e != nil && (seq == 0 || seq > e.seq)
}

// hold is sub-agent id reaching its hold: it returns once the rerun's
// sub-agent has ended, having ended it as recorded when its end was a
// timeout or a crash.
func (s *replayState) hold(id string) {
	e, en := s.ends[id], s.owner()
	if e == nil || en == nil {
		return
	}
	_, done, ok := en.SubAgent(id)
	if !ok {
		return
	}
	select {
	case <-e.held:
	default:
		close(e.held)
	}
	switch x := e.end.(type) {
	case *event.SubAgentTimedOut:
		// Its own timer, at once: the end entry and the reason the parent
		// reads are the engine's own.
		en.ExpireSubAgent(id)
	case *event.SubAgentFailed:
		if x.Reason == event.SubAgentCrashed {
			en.KillSubAgent(id)
		}
	}
	<-done
}

// awaitCancel makes the parent's live cancel_agent p wait, when the record
// shows it cancelling a sub-agent that was held, until the rerun's
// sub-agent is held too (or has ended on its own).
func (s *replayState) awaitCancel(p judge.Proposal) {
	var a struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(p.Args, &a) != nil {
		return
	}
	e := s.ends[a.ID]
	if e == nil || !e.hold {
		return
	}
	if c, ok := e.end.(*event.SubAgentCancelled); !ok || c.ByCallID != p.CallID {
		return
	}
	en := s.owner()
	if en == nil {
		return
	}
	session, done, ok := en.SubAgent(a.ID)
	if !ok || session != p.Session {
		return
	}
	select {
	case <-e.held:
	case <-done:
	}
}

// cancelledLater reports whether the record has the parent wait for
// sub-agent id's result (recorded proposal seq) before its cancel_agent
// that ended it: no genuine record does (the wait would have ended first),
// and live, the wait would hold until the sub-agent's timeout. Such a wait
// is served from the record.
func (s *replayState) cancelledLater(id string, seq uint64) bool {
	e := s.ends[id]
	return e != nil && e.hold && e.cancelSeq > seq
}

// owner is the replay engine, once New has set it up.
func (s *replayState) owner() *engine.Engine {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.eng
}
