package ledger

import (
	"encoding/binary"
	"math/bits"
	"strconv"
)

// scanner is the allocation-light reader behind ParseEntry. It shares the
// string decoder with the canonicaliser and adds a validating skip, which
// is what keeps verify fast: an entry's data is checked for well-formed
// JSON without being decoded.
type scanner canonParser

func (s *scanner) p() *canonParser { return (*canonParser)(s) }

func (s *scanner) fail(msg string) error { return &SyntaxError{Offset: s.pos, Msg: msg} }

func (s *scanner) space() { s.p().skipSpace() }

func (s *scanner) eat(c byte) bool {
	if s.pos < len(s.b) && s.b[s.pos] == c {
		s.pos++
		return true
	}
	return false
}

func (s *scanner) str() (string, error) {
	if s.pos >= len(s.b) || s.b[s.pos] != '"' {
		return "", s.fail("expected string")
	}
	return s.p().str()
}

// keyBytes returns an object key's decoded bytes without allocating when
// the key has no escapes (entry member names never do).
func (s *scanner) keyBytes() ([]byte, error) {
	start := s.pos
	if raw, err := s.rawStr(); err == nil {
		return raw, nil
	}
	s.pos = start
	k, err := s.str()
	return []byte(k), err
}

// rawStr returns the bytes between the quotes of a string without escapes.
func (s *scanner) rawStr() ([]byte, error) {
	if !s.eat('"') {
		return nil, s.fail("expected string")
	}
	start := s.pos
	s.pos = plainRun(s.b, s.pos)
	for s.pos < len(s.b) {
		switch c := s.b[s.pos]; {
		case c == '"':
			s.pos++
			return s.b[start : s.pos-1], nil
		case c == '\\' || c < 0x20:
			return nil, s.fail("unexpected escape or control character")
		}
		s.pos++
	}
	return nil, s.fail("unterminated string")
}

func (s *scanner) uint() (uint64, error) {
	start := s.pos
	for s.pos < len(s.b) && s.b[s.pos] >= '0' && s.b[s.pos] <= '9' {
		s.pos++
	}
	if s.pos == start || (s.b[start] == '0' && s.pos-start > 1) {
		return 0, s.fail("expected unsigned integer")
	}
	n, err := strconv.ParseUint(string(s.b[start:s.pos]), 10, 64)
	if err != nil || n > MaxSafeInteger {
		return 0, s.fail("integer out of range")
	}
	return n, nil
}

// skipValue advances past one JSON value, checking its syntax.
func (s *scanner) skipValue(depth int) error {
	if depth > maxDepth {
		return s.fail("nesting too deep")
	}
	if s.pos >= len(s.b) {
		return s.fail("unexpected end of input")
	}
	switch c := s.b[s.pos]; {
	case c == '"':
		return s.skipString()
	case c == '{':
		s.pos++
		s.space()
		if s.eat('}') {
			return nil
		}
		for {
			s.space()
			if err := s.skipString(); err != nil {
				return err
			}
			s.space()
			if !s.eat(':') {
				return s.fail("expected :")
			}
			s.space()
			if err := s.skipValue(depth + 1); err != nil {
				return err
			}
			s.space()
			if s.eat(',') {
				continue
			}
			if s.eat('}') {
				return nil
			}
			return s.fail("expected , or }")
		}
	case c == '[':
		s.pos++
		s.space()
		if s.eat(']') {
			return nil
		}
		for {
			s.space()
			if err := s.skipValue(depth + 1); err != nil {
				return err
			}
			s.space()
			if s.eat(',') {
				continue
			}
			if s.eat(']') {
				return nil
			}
			return s.fail("expected , or ]")
		}
	case c == '-' || (c >= '0' && c <= '9'):
		if c == '-' {
			s.pos++
		}
		if _, err := s.uint(); err != nil {
			return err
		}
		if s.pos < len(s.b) && (s.b[s.pos] == '.' || s.b[s.pos] == 'e' || s.b[s.pos] == 'E') {
			return s.fail("non-integer number")
		}
		return nil
	case c == 't':
		_, err := s.p().literal(nil, "true")
		return err
	case c == 'f':
		_, err := s.p().literal(nil, "false")
		return err
	case c == 'n':
		_, err := s.p().literal(nil, "null")
		return err
	}
	return s.fail("unexpected character")
}

func (s *scanner) skipString() error {
	if !s.eat('"') {
		return s.fail("expected string")
	}
	s.pos = plainRun(s.b, s.pos)
	for s.pos < len(s.b) {
		c := s.b[s.pos]
		switch {
		case c == '"':
			s.blob = s.blob || string(s.b[max(s.pos-4, 0):s.pos]) == "blob"
			s.pos++
			return nil
		case c < 0x20:
			return s.fail("control character in string")
		case c == '\\':
			if s.pos+1 >= len(s.b) {
				return s.fail("unterminated escape")
			}
			switch s.b[s.pos+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.pos += 2
			case 'u':
				s.pos += 2
				if _, err := s.p().hex4(); err != nil {
					return err
				}
			default:
				return s.fail("invalid escape")
			}
		default:
			s.pos++
		}
	}
	return s.fail("unterminated string")
}

// plainRun returns the index of the first byte at or after i that needs a
// look in a JSON string (a quote, a backslash or a control character), or
// len(b), examining eight bytes per step.
func plainRun(b []byte, i int) int {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	for ; i+8 <= len(b); i += 8 {
		v := binary.LittleEndian.Uint64(b[i:])
		q := v ^ (lo * '"')
		bs := v ^ (lo * '\\')
		// Exact: a byte is flagged iff it is a quote, a backslash or
		// below 0x20 (bytes >= 0x80 are never flagged).
		t := ((q - lo) &^ q) | ((bs - lo) &^ bs) | ((v - lo*0x20) &^ v)
		if t &= hi; t != 0 {
			return i + bits.TrailingZeros64(t)/8
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c == '"' || c == '\\' || c < 0x20 {
			return i
		}
	}
	return i
}
