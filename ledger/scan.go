package ledger

import (
	"encoding/binary"
	"math/bits"
	"strconv"

	"github.com/opx-dev/opx/internal/jsonscan"
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

// checkStr checks the string at s as str reads it, keeping nothing.
func (s *scanner) checkStr() error {
	if s.pos >= len(s.b) || s.b[s.pos] != '"' {
		return s.fail("expected string")
	}
	_, err := s.p().strBytes()
	return err
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
	s.pos = jsonscan.PlainRun(s.b, s.pos)
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

// skipValue advances past one JSON value, checking its syntax; on an
// error s.pos is where it was found.
func (s *scanner) skipValue(depth int) error {
	end, msg := skipJSON(s.b, s.pos, depth, &s.blob)
	s.pos = end
	if msg != "" {
		return s.fail(msg)
	}
	return nil
}

// skipJSON is skipValue on locals, the position in a register rather
// than in the scanner (what makes it fast): it returns the position after
// the value at b[i:], or where it is malformed with what is wrong. It
// sets *blob when a string it passes ends in the bytes blob.
func skipJSON(b []byte, i, depth int, blob *bool) (int, string) {
	if depth > maxDepth {
		return i, "nesting too deep"
	}
	if i >= len(b) {
		return i, "unexpected end of input"
	}
	var msg string
	switch c := b[i]; {
	case c == '"':
		return skipJSONString(b, i, blob)
	case c == '{':
		i = skipJSONSpace(b, i+1)
		if i < len(b) && b[i] == '}' {
			return i + 1, ""
		}
		for {
			if i, msg = skipJSONString(b, skipJSONSpace(b, i), blob); msg != "" {
				return i, msg
			}
			if i = skipJSONSpace(b, i); i >= len(b) || b[i] != ':' {
				return i, "expected :"
			}
			if i, msg = skipJSON(b, skipJSONSpace(b, i+1), depth+1, blob); msg != "" {
				return i, msg
			}
			if i = skipJSONSpace(b, i); i < len(b) && b[i] == ',' {
				i++
				continue
			}
			if i < len(b) && b[i] == '}' {
				return i + 1, ""
			}
			return i, "expected , or }"
		}
	case c == '[':
		i = skipJSONSpace(b, i+1)
		if i < len(b) && b[i] == ']' {
			return i + 1, ""
		}
		for {
			if i, msg = skipJSON(b, skipJSONSpace(b, i), depth+1, blob); msg != "" {
				return i, msg
			}
			if i = skipJSONSpace(b, i); i < len(b) && b[i] == ',' {
				i++
				continue
			}
			if i < len(b) && b[i] == ']' {
				return i + 1, ""
			}
			return i, "expected , or ]"
		}
	case c == '-' || (c >= '0' && c <= '9'):
		if c == '-' {
			i++
		}
		// As scanner.uint: digits, no leading zero, at most 2^53-1.
		start, n := i, uint64(0)
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			if n <= MaxSafeInteger {
				n = n*10 + uint64(b[i]-'0')
			}
		}
		switch {
		case i == start || (b[start] == '0' && i-start > 1):
			return i, "expected unsigned integer"
		case n > MaxSafeInteger:
			return i, "integer out of range"
		case i < len(b) && (b[i] == '.' || b[i] == 'e' || b[i] == 'E'):
			return i, "non-integer number"
		}
		return i, ""
	case c == 't':
		return skipJSONLiteral(b, i, "true")
	case c == 'f':
		return skipJSONLiteral(b, i, "false")
	case c == 'n':
		return skipJSONLiteral(b, i, "null")
	}
	return i, "unexpected character"
}

// skipJSONSpace returns the position of the first byte at or after i that
// is not JSON white space.
func skipJSONSpace(b []byte, i int) int {
	for i < len(b) && b[i] <= ' ' && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

func skipJSONLiteral(b []byte, i int, lit string) (int, string) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return i, "invalid literal"
	}
	return i + len(lit), ""
}

// skipJSONString is skipJSON of the string that should start at b[i].
func skipJSONString(b []byte, i int, blob *bool) (int, string) {
	if i >= len(b) || b[i] != '"' {
		return i, "expected string"
	}
	i++
	for {
		// Most strings end within eight bytes: that word is looked at
		// here, without a call.
		if i+8 <= len(b) {
			if t := jsonscan.SpecialBytes(binary.LittleEndian.Uint64(b[i:])); t != 0 {
				i += bits.TrailingZeros64(t) / 8
			} else {
				i = jsonscan.PlainRun(b, i+8)
			}
		} else {
			i = jsonscan.PlainRun(b, i)
		}
		if i >= len(b) {
			return i, "unterminated string"
		}
		switch c := b[i]; {
		case c == '"':
			if i >= 4 && binary.LittleEndian.Uint32(b[i-4:]) == blobWord {
				*blob = true
			}
			return i + 1, ""
		case c < 0x20:
			return i, "control character in string"
		}
		// A backslash.
		if i+1 >= len(b) {
			return i, "unterminated escape"
		}
		switch b[i+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			i += 2
		case 'u':
			i += 2
			if i+4 > len(b) {
				return i, "short \\u escape"
			}
			for _, h := range b[i : i+4] {
				if l := h | 0x20; (h < '0' || h > '9') && (l < 'a' || l > 'f') { // hex4's digits
					return i, "invalid \\u escape"
				}
			}
			i += 4
		default:
			return i, "invalid escape"
		}
	}
}

// blobWord is the bytes "blob" read as a little-endian uint32.
var blobWord = binary.LittleEndian.Uint32([]byte("blob"))
