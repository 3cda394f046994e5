package ledger

import (
	"bytes"
	"testing"

	"github.com/opx-dev/opx/internal/jsonscan"
)

// skipValueRef is the scanner's validating skip before skipJSON: each
// step through the scanner's fields, one byte at a time after an escape.
// It is the reference skipJSON is held to.
func (s *scanner) skipValueRef(depth int) error {
	if depth > maxDepth {
		return s.fail("nesting too deep")
	}
	if s.pos >= len(s.b) {
		return s.fail("unexpected end of input")
	}
	switch c := s.b[s.pos]; {
	case c == '"':
		return s.skipStringRef()
	case c == '{':
		s.pos++
		s.space()
		if s.eat('}') {
			return nil
		}
		for {
			s.space()
			if err := s.skipStringRef(); err != nil {
				return err
			}
			s.space()
			if !s.eat(':') {
				return s.fail("expected :")
			}
			s.space()
			if err := s.skipValueRef(depth + 1); err != nil {
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
			if err := s.skipValueRef(depth + 1); err != nil {
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

func (s *scanner) skipStringRef() error {
	if !s.eat('"') {
		return s.fail("expected string")
	}
	s.pos = jsonscan.PlainRun(s.b, s.pos)
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

// sameSkip fails t when skipJSON and skipValueRef differ on b from its
// start, its second byte or its ninth (an entry's data): in the end (or
// the failure's offset), the message, or the blob flag (which must be
// bytes.Contains(`blob"`) of what it passed).
func sameSkip(t testing.TB, b []byte) {
	t.Helper()
	for _, at := range []int{0, 1, 8} {
		ref := scanner{b: b, pos: at}
		refErr := ref.skipValueRef(0)
		var blob bool
		end, msg := skipJSON(b, at, 0, &blob)
		got := scanner{b: b, pos: end}
		var gotErr error
		if msg != "" {
			gotErr = got.fail(msg)
		}
		if end != ref.pos || (gotErr == nil) != (refErr == nil) || (refErr != nil && gotErr.Error() != refErr.Error()) {
			t.Fatalf("%q from %d: skipJSON ends at %d (%v), the reference at %d (%v)", b, at, end, gotErr, ref.pos, refErr)
		}
		if refErr == nil && blob != bytes.Contains(b[at:end], []byte(`blob"`)) {
			t.Fatalf("%q from %d: blob %v", b, at, blob)
		}
	}
}

// TestSkipJSON_MatchesReference: on the fixture ledgers' lines and edge
// values (canonicalSeeds), values naming blobs, and variants of a sample
// of them (every byte replaced by each of a set of bytes that matter to
// the syntax, inserted or deleted, and every prefix), skipJSON ends where
// the reference does, fails with its error, and sees blob" exactly.
func TestSkipJSON_MatchesReference(t *testing.T) {
	t.Parallel()
	seeds := canonicalSeeds(t)
	for _, v := range []string{`{"blob":"x"}`, `{"a_blob":"x","b":[{"blob":1}]}`, `["blob","\blob",  "\u0062lob", "\\blob"]`,
		`"\uABCD\uabcd\u0Af9"`, `"\uAbCG"`, `"\u0:00"`, `"\u0@00"`, "\"\\u0\x1000\"", "\"\\u0\x3000\"", `"\u00`, `"\`,
		`"\x"`, `-`, `-0`, `-a`, `123456789012345678901234567890`, `9007199254740991`, `9007199254740992`,
		`18446744073709551616`, `1.`, `1e`, `01`, "[\t1\n,\r2 ]", "{ \"a\" : 1 , \"b\" :[ ] }", `"abcdefgh"`,
		`"abcdefg\"`, `"abcdefghijklmnop\n\"qrstuvwx"`, "\"abcdefghijklmn\x01\""} {
		seeds = append(seeds, []byte(v))
	}
	for _, b := range seeds {
		sameSkip(t, b)
	}
	special := []byte{' ', '"', '\\', ',', ':', '{', '}', '[', ']', '0', '1', '-', '.', 'e', 'b', 'u', 'n', 'A', 0x1f, 0xff}
	// Every short seed and long entries drawn afresh each run
	// (eachVariant): FuzzSkipJSON searches the rest.
	eachVariant(t, seeds, sweepBudget(t, 1_500_000), special, func(v []byte) { sameSkip(t, v) })
}

// FuzzSkipJSON: for any bytes, skipJSON agrees with the reference
// (sameSkip):
//
//	go test ./ledger -run '^$' -fuzz FuzzSkipJSON -fuzztime 60s -fuzzminimizetime 3s
func FuzzSkipJSON(f *testing.F) {
	for _, b := range canonicalSeeds(f) {
		if len(b) < 2000 {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		sameSkip(t, b)
	})
}
