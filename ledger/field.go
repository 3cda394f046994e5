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
	s := &scanner{b: data}
	s.space()
	if !s.eat('{') {
		return nil, false
	}
	s.space()
	if s.eat('}') {
		return nil, false
	}
	for {
		s.space()
		k, err := s.keyBytes()
		if err != nil {
			return nil, false
		}
		s.space()
		if !s.eat(':') {
			return nil, false
		}
		s.space()
		start := s.pos
		if err := s.skipValue(0); err != nil {
			return nil, false
		}
		if string(k) == name {
			return data[start:s.pos], true
		}
		s.space()
		if s.eat(',') {
			continue
		}
		return nil, false
	}
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
