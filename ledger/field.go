package ledger

import (
	"strconv"
)

// Field returns the raw JSON text of a top-level member of the JSON
// object data (an entry's data), without decoding the others: what a
// projection reads of most entries is a member or two, and decoding whole
// payloads would cost rebuilds several times over. ok is false when data
// is not an object or has no such member.
func Field(data []byte, name string) (raw []byte, ok bool) {
	members(data, func(k, v []byte) bool {
		if string(k) == name {
			raw, ok = v, true
		}
		return !ok
	})
	return raw, ok
}

// Fields returns the raw JSON text of several top-level members in one
// pass over data (nil for each member it does not have): cheaper than a
// Field call per member when a fold needs a few.
func Fields(data []byte, names ...string) [][]byte {
	out := make([][]byte, len(names))
	left := len(names)
	members(data, func(k, v []byte) bool {
		for i, n := range names {
			if out[i] == nil && string(k) == n {
				out[i] = v
				left--
				break
			}
		}
		return left > 0
	})
	return out
}

// members calls fn with each top-level member's key (undecoded when it
// has no escapes) and raw value, in order, until fn returns false or the
// object ends or is malformed.
func members(data []byte, fn func(key, raw []byte) bool) { Members(data, fn) }

// Members calls fn with each top-level member of the JSON object data, in
// order: its key (decoded) and its raw value, until fn returns false. It
// reports whether data is a well-formed object read to its end (true
// also when fn stopped it), without decoding the values: a reader that
// needs a few plain members of millions of entries (the causality check)
// reads them here and leaves anything unusual to encoding/json.
func Members(data []byte, fn func(key, raw []byte) bool) bool {
	s := &scanner{b: data}
	s.space()
	if !s.eat('{') {
		return false
	}
	s.space()
	if s.eat('}') {
		s.space()
		return s.pos == len(data)
	}
	for {
		s.space()
		k, err := s.keyBytes()
		if err != nil {
			return false
		}
		s.space()
		if !s.eat(':') {
			return false
		}
		s.space()
		start := s.pos
		if err := s.skipValue(0); err != nil {
			return false
		}
		if !fn(k, data[start:s.pos]) {
			return true
		}
		s.space()
		if s.eat(',') {
			continue
		}
		if !s.eat('}') {
			return false
		}
		s.space()
		return s.pos == len(data)
	}
}

// RawString unescapes a raw JSON string (as Field returns it); "" when it
// is not one.
func RawString(raw []byte) string {
	if len(raw) < 2 || raw[0] != '"' {
		return ""
	}
	s := &scanner{b: raw}
	v, _ := s.str()
	return v
}

// RawInt parses a raw JSON integer; 0 when it is not one.
func RawInt(raw []byte) int64 {
	n, _ := strconv.ParseInt(string(raw), 10, 64)
	return n
}

// FieldString returns a top-level string member, unescaped.
func FieldString(data []byte, name string) (string, bool) {
	raw, ok := Field(data, name)
	if !ok || len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	s := &scanner{b: raw}
	v, err := s.str()
	return v, err == nil
}

// FieldInt returns a top-level integer member.
func FieldInt(data []byte, name string) (int64, bool) {
	raw, ok := Field(data, name)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	return n, err == nil
}

// FieldBool returns a top-level boolean member.
func FieldBool(data []byte, name string) (bool, bool) {
	raw, ok := Field(data, name)
	switch {
	case !ok:
		return false, false
	case string(raw) == "true":
		return true, true
	case string(raw) == "false":
		return false, true
	}
	return false, false
}

// Elements calls fn with the raw JSON text of each element of the JSON
// array raw, in order, until fn returns false. It reports false when raw
// is not a well-formed array (after calling fn for the elements before
// the fault).
func Elements(raw []byte, fn func(elem []byte) bool) bool {
	s := &scanner{b: raw}
	s.space()
	if !s.eat('[') {
		return false
	}
	s.space()
	if s.eat(']') {
		return true
	}
	for {
		s.space()
		start := s.pos
		if err := s.skipValue(0); err != nil {
			return false
		}
		if !fn(raw[start:s.pos]) {
			return true
		}
		s.space()
		if s.eat(',') {
			continue
		}
		return s.eat(']')
	}
}
