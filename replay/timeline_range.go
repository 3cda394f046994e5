package replay

import (
	"bytes"
	"encoding/json"

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
