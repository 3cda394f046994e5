package ledger

import "bytes"

// parseEntryLaidOut is parseEntry for an entry laid out exactly as
// encodeEntry writes it (the six members in sorted order, no white
// space), which is every entry opx writes: each member name is matched
// as one literal rather than read, looked up and counted, and prev is
// read as its 64 hex digits. Every value is read by the reader the
// general loop uses, so an entry taken here decodes as the loop would
// decode it. ok is false for any other layout and for any error; the
// general loop then reads the entry and decides (and words the error).
//
// With t.canon (strict verify), it also finds whether the entry is in
// canonical form, as isCanonical would, reading each value once: the data
// is read by the canonical form's reader instead of the syntax check when
// it is canonical (canonical data is valid JSON, so the check would pass
// and end there), and t.canonical says the whole entry was found
// canonical. False says nothing: isCanonical then decides.
func parseEntryLaidOut(raw []byte, t *entryStrings) (e Entry, ok bool) {
	if t != nil {
		t.canonical = false // until this entry is found canonical
	}
	s := scanner{b: raw}
	if !s.lit(`{"data":{`) {
		return e, false
	}
	s.pos--
	start := s.pos
	s.blob = false
	// canon: every value read so far is in canonical form (t.canon).
	canon := false
	if t != nil && t.canon {
		p := canonParser{b: raw, pos: start}
		if canon = p.inPlaceValue(1); canon {
			// Canonical data is valid JSON: the syntax check below
			// would end where this one did.
			s.pos = p.pos
			s.blob = bytes.Contains(raw[start:s.pos], []byte(`blob"`))
		}
	}
	if !canon && s.skipValue(0) != nil {
		return e, false
	}
	e.Data = raw[start:s.pos]
	// 64 hex digits and the closing quote: what rawStr would return (hex
	// holds no quote, backslash or control byte) and parseHashBytes take.
	if !s.lit(`,"prev":"`) || len(raw)-s.pos <= 2*len(e.Prev) || raw[s.pos+2*len(e.Prev)] != '"' {
		return e, false
	}
	var err error
	if e.Prev, err = parseHashBytes(raw[s.pos : s.pos+2*len(e.Prev)]); err != nil {
		return e, false
	}
	s.pos += 2 * len(e.Prev)
	if !s.lit(`","seq":`) {
		return e, false
	}
	at := s.pos
	if e.Seq, err = s.uint(); err != nil {
		return e, false
	}
	canon = canon && canonicalAt(raw, at, s.pos)
	if !s.lit(`,"session":`) {
		return e, false
	}
	at = s.pos
	if e.Session, err = t.session(&s); err != nil {
		return e, false
	}
	canon = canon && canonicalAt(raw, at, s.pos)
	if !s.lit(`,"ts":`) {
		return e, false
	}
	at = s.pos
	if e.TS, err = t.ts(&s); err != nil {
		return e, false
	}
	canon = canon && canonicalAt(raw, at, s.pos)
	if !s.lit(`,"type":`) {
		return e, false
	}
	at = s.pos
	if e.Type, err = t.str(&s); err != nil || !s.lit(`}`) || s.pos != len(raw) {
		return e, false
	}
	// The member names are in canonical order, without white space, and
	// prev's 64 hex digits need no escape: the entry is canonical when
	// its values are.
	canon = canon && canonicalAt(raw, at, s.pos-1)
	t.noteData(&s)
	if canon {
		t.canonical = true
	}
	e.Raw = raw
	return e, true
}

// canonicalAt reports whether raw[from:to] is one value in canonical
// form, a member's value inside an entry (nesting depth 1).
func canonicalAt(raw []byte, from, to int) bool {
	p := canonParser{b: raw[:to], pos: from}
	return p.inPlaceValue(1) && p.pos == to
}

// lit advances past l if the input continues with it.
func (s *scanner) lit(l string) bool {
	if len(s.b)-s.pos >= len(l) && string(s.b[s.pos:s.pos+len(l)]) == l {
		s.pos += len(l)
		return true
	}
	return false
}
