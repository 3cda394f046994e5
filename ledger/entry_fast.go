package ledger

// parseEntryLaidOut is parseEntry for an entry laid out exactly as
// encodeEntry writes it (the six members in sorted order, no white
// space), which is every entry opx writes: each member name is matched
// as one literal rather than read, looked up and counted, and prev is
// read as its 64 hex digits. Every value is read by the reader the
// general loop uses, so an entry taken here decodes as the loop would
// decode it. ok is false for any other layout and for any error; the
// general loop then reads the entry and decides (and words the error).
func parseEntryLaidOut(raw []byte, t *entryStrings) (e Entry, ok bool) {
	s := scanner{b: raw}
	if !s.lit(`{"data":{`) {
		return e, false
	}
	s.pos--
	start := s.pos
	s.blob = false
	if s.skipValue(0) != nil {
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
	if e.Seq, err = s.uint(); err != nil || !s.lit(`,"session":`) {
		return e, false
	}
	if e.Session, err = t.session(&s); err != nil || !s.lit(`,"ts":`) {
		return e, false
	}
	if e.TS, err = t.ts(&s); err != nil || !s.lit(`,"type":`) {
		return e, false
	}
	if e.Type, err = t.str(&s); err != nil || !s.lit(`}`) || s.pos != len(raw) {
		return e, false
	}
	t.noteData(&s)
	e.Raw = raw
	return e, true
}

// lit advances past l if the input continues with it.
func (s *scanner) lit(l string) bool {
	if len(s.b)-s.pos >= len(l) && string(s.b[s.pos:s.pos+len(l)]) == l {
		s.pos += len(l)
		return true
	}
	return false
}
