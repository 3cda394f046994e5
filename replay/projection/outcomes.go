package projection

import (
	"encoding/binary"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// Outcomes counts, per session, how its tool calls were judged and how
// they ended, and, ledger-wide, Shield's verdicts per day: what a
// listing filters sessions by (blocked, escalated, failed, flagged,
// rolled back) and charts, without reading any timeline.
//
// Keys: under id NUL "o" the session's counts as OutcomeSlots 8-byte
// big-endian numbers; under NUL "snap" NUL seq the session of each
// snapshot (a rollback names the snapshot it restores, not always the
// session); under NUL "day" NUL yyyy-mm-dd NUL decision the verdicts of
// that day (UTC, from the entry's ts).
//
// It is not (yet) one of All: the ledger file does not keep it, so its
// readers fold it (ledger.FoldProjection), the console once and then
// entry by entry as the ledger grows. Adding it to All is a change of
// what the engine writes and of the fixtures' checkpoints.
type Outcomes struct{}

func (Outcomes) Name() string    { return "outcomes" }
func (Outcomes) Version() string { return "1" }

// The slots of a session's outcome record.
const (
	SlotAllow      = iota // shield.verdict allow
	SlotBlock             // shield.verdict block
	SlotEscalate          // shield.verdict escalate
	SlotApproval          // approval.requested: a human was asked
	SlotDenied            // approval.resolved, not approved
	SlotFailed            // exec.failed, or exec.completed that failed (event.ExecOutcome)
	SlotFlagged           // shield.result_flagged
	SlotRolledBack        // chronicle.rollback of one of its snapshots, or of the session
	OutcomeSlots
)

// SessionOutcomes are a session's counts, by slot.
type SessionOutcomes [OutcomeSlots]uint64

func (Outcomes) Apply(b ledger.Bucket, e *ledger.Entry) error {
	switch e.Type {
	case event.TypeShieldVerdict:
		d := str(e, "decision")
		if len(e.TS) >= 10 {
			if err := add(b, 1, "", "day", e.TS[:10], d); err != nil {
				return err
			}
		}
		switch d {
		case event.Allow:
			return bump(b, e.Session, SlotAllow)
		case event.Block:
			return bump(b, e.Session, SlotBlock)
		case event.Escalate:
			return bump(b, e.Session, SlotEscalate)
		}
	case event.TypeApprovalRequested:
		return bump(b, e.Session, SlotApproval)
	case event.TypeApprovalResolved:
		if v, ok := ledger.Field(e.Data, "approved"); ok && string(v) == "true" {
			return nil
		}
		return bump(b, e.Session, SlotDenied)
	case event.TypeExecFailed:
		return bump(b, e.Session, SlotFailed)
	case event.TypeExecCompleted:
		f := ledger.Fields(e.Data, "exit_code", "failed", "tool")
		if event.ExecOutcome(ledger.RawString(f[2]), ledger.RawInt(f[0]), string(f[1]) == "true") == event.ExecError {
			return bump(b, e.Session, SlotFailed)
		}
	case event.TypeResultFlagged:
		return bump(b, e.Session, SlotFlagged)
	case event.TypeSnapshot:
		if e.Session != "" {
			return b.Put(seqKey(e.Seq, "", "snap"), []byte(e.Session))
		}
	case event.TypeRollback:
		s := str(e, "session")
		if s == "" {
			if snap := num(e.Data, "snapshot"); snap > 0 {
				s = string(b.Get(seqKey(uint64(snap), "", "snap")))
			}
		}
		return bump(b, s, SlotRolledBack)
	}
	return nil
}

// bump adds one to slot of session's record ("" counts nowhere).
func bump(b ledger.Bucket, session string, slot int) error {
	if session == "" {
		return nil
	}
	k := key(session, "o")
	v := make([]byte, OutcomeSlots*8)
	copy(v, b.Get(k))
	binary.BigEndian.PutUint64(v[slot*8:], binary.BigEndian.Uint64(v[slot*8:])+1)
	return b.Put(k, v)
}

// ReadOutcomes returns the counts of session (zero when it has none).
func ReadOutcomes(b ledger.Bucket, session string) SessionOutcomes {
	var o SessionOutcomes
	v := b.Get(key(session, "o"))
	for i := range o {
		if len(v) >= (i+1)*8 {
			o[i] = binary.BigEndian.Uint64(v[i*8:])
		}
	}
	return o
}

// DayVerdicts is the number of verdicts of each decision on one day.
type DayVerdicts struct {
	Day      string // yyyy-mm-dd, UTC
	Allow    uint64
	Block    uint64
	Escalate uint64
}

// ReadDayVerdicts returns the verdicts per day, oldest first.
func ReadDayVerdicts(b ledger.Bucket) []DayVerdicts {
	var out []DayVerdicts
	prefix := key("", "day", "")
	c := b.Cursor()
	for k, v := c.Seek(prefix); k != nil && len(k) > len(prefix) && string(k[:len(prefix)]) == string(prefix); k, v = c.Next() {
		rest := k[len(prefix):]
		if len(rest) < 12 || rest[10] != 0 || len(v) != 8 {
			continue
		}
		day, d := string(rest[:10]), string(rest[11:])
		if len(out) == 0 || out[len(out)-1].Day != day {
			out = append(out, DayVerdicts{Day: day})
		}
		n := binary.BigEndian.Uint64(v)
		switch d {
		case event.Allow:
			out[len(out)-1].Allow += n
		case event.Block:
			out[len(out)-1].Block += n
		case event.Escalate:
			out[len(out)-1].Escalate += n
		}
	}
	return out
}
