package replay

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// rawRanger is a source that can hand out stored entry bytes without
// parsing them (a ledger file).
type rawRanger interface {
	RangeRaw(from, to uint64, fn func(seq uint64, raw []byte) error) error
}

// rangeFor calls fn with every entry of src up to seq to that the builder
// of session may use, in seq order. From a ledger file it reads the stored
// bytes and parses only the entries whose tail (session, ts, type: the
// last members of a canonical entry) names the session, no session, or a
// type the builder reads from any session: on a large ledger that is a few
// entries in a thousand, and parsing all of them would cost ten times the
// reading. An entry whose tail is not in canonical shape is parsed. From
// any other source every entry is parsed.
func rangeFor(src Source, session string, to uint64, fn func(ledger.Entry) error) error {
	rr, ok := src.(rawRanger)
	sj, err := json.Marshal(session)
	if !ok || err != nil || bytes.IndexByte(sj, '\\') >= 0 {
		return src.Range(0, to, fn)
	}
	return rr.RangeRaw(0, to, func(seq uint64, raw []byte) error {
		if skip(raw, sj) {
			return nil
		}
		e, err := ledger.ParseEntry(append([]byte(nil), raw...))
		if err != nil || e.Seq != seq {
			// Range reports these; so does verification.
			return src.Range(seq, seq, fn)
		}
		return fn(e)
	})
}

// skip reports whether a stored entry certainly does not concern the
// session whose JSON string is sj: its canonical tail
// `,"session":"S","ts":"T","type":"Y"}` names another, non-empty session
// and a type the builder reads only from its own session. It reads the
// tail backwards, a few dozen bytes, and answers false (parse it) for any
// entry whose tail is not in that shape.
func skip(raw, sj []byte) bool {
	typ, rest, ok := lastMember(raw[:max(0, len(raw)-1)], `,"type":`)
	if !ok || raw[len(raw)-1] != '}' {
		return false
	}
	_, rest, ok = lastMember(rest, `,"ts":`)
	if !ok {
		return false
	}
	sess, _, ok := lastMember(rest, `,"session":`)
	if !ok || bytes.Equal(sess, sj) || len(sess) == 2 {
		return false
	}
	switch string(typ[1 : len(typ)-1]) {
	case event.TypeEngineStarted, event.TypeEngineCrashed, event.TypeRollback, event.TypePruned:
		return false // read whatever their session
	}
	return true
}

// lastMember splits b, which must end in the member name+`"value"` (a
// string without escapes), into the value (quotes included) and what
// precedes the member.
func lastMember(b []byte, name string) (value, rest []byte, ok bool) {
	if len(b) < 2 || b[len(b)-1] != '"' {
		return nil, nil, false
	}
	q := len(b) - 2
	for ; q >= 0 && b[q] != '"'; q-- {
		if b[q] == '\\' {
			return nil, nil, false
		}
	}
	if q < len(name) || string(b[q-len(name):q]) != name {
		return nil, nil, false
	}
	return b[q:], b[:q-len(name)], true
}

// Lookup returns nil when session has an entry up to seq at (0: the
// head), and otherwise the error Build would return, wrapping
// ErrUnknownSession. It stops at the session's first entry, so a review
// can refuse an unknown id before it verifies the whole ledger. Errors
// reading src are returned as they are.
func Lookup(src Source, session string, at uint64) error {
	if session == "" {
		return fmt.Errorf("%w: empty session id", ErrUnknownSession)
	}
	to := ^uint64(0)
	if at != 0 {
		to = at
	}
	first, err := firstOf(src, session, 0, to)
	if err != nil {
		return fmt.Errorf("read session %s: %w", session, err)
	}
	if first.found {
		return nil
	}
	return unknownSession(src, session, at)
}

// unknownSession is the error for a session with no entry up to at,
// saying whether it exists later, so "--at too early" is not mistaken for
// a wrong id.
func unknownSession(src Source, session string, at uint64) error {
	if at != 0 {
		later, err := firstOf(src, session, at+1, ^uint64(0))
		if err != nil {
			return fmt.Errorf("read session %s: %w", session, err)
		}
		if later.found {
			return fmt.Errorf("%w %q at seq %d: its first entry is seq %d", ErrUnknownSession, session, at, later.seq)
		}
	}
	return fmt.Errorf("%w %q: no entry of the ledger belongs to it", ErrUnknownSession, session)
}

// seqFound is the seq of an entry found, if one was.
type seqFound struct {
	seq   uint64
	found bool
}

// firstOf finds the first entry of session in from..to. From a ledger
// file it parses only the entries whose bytes name the session.
func firstOf(src Source, session string, from, to uint64) (seqFound, error) {
	var out seqFound
	match := func(e ledger.Entry) error {
		if e.Session == session {
			out = seqFound{seq: e.Seq, found: true}
			return errFound
		}
		return nil
	}
	var err error
	rr, ok := src.(rawRanger)
	sj, jerr := json.Marshal(session)
	if ok && jerr == nil && bytes.IndexByte(sj, '\\') < 0 {
		needle := append([]byte(`"session":`), sj...)
		err = rr.RangeRaw(from, to, func(seq uint64, raw []byte) error {
			if !bytes.Contains(raw, needle) {
				return nil
			}
			e, perr := ledger.ParseEntry(append([]byte(nil), raw...))
			if perr != nil {
				return nil // verification reports it
			}
			return match(e)
		})
	} else {
		err = src.Range(from, to, match)
	}
	if err != nil && !errors.Is(err, errFound) {
		return seqFound{}, err
	}
	return out, nil
}
