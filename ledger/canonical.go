package ledger

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/opx-dev/opx/internal/jsonscan"
)

// MaxSafeInteger is the largest integer magnitude allowed in an entry. JCS
// (RFC 8785) serialises numbers as IEEE-754 doubles, and common verifiers
// (jq, JavaScript) read them that way, so integers beyond 2^53-1 would not
// survive a round trip through an independent tool.
const MaxSafeInteger = 1<<53 - 1

// maxDepth bounds nesting so hostile input cannot exhaust the stack.
const maxDepth = 512

// Canonicalize returns the RFC 8785 (JCS) canonical form of the JSON value
// in src, restricted to the opx-ledger/1 profile: integers only (no
// fractions, exponents or -0, magnitude at most MaxSafeInteger), valid
// UTF-8, no duplicate object keys. Object members are sorted by the UTF-16
// code units of their keys; strings escape only what JCS escapes.
func Canonicalize(src []byte) ([]byte, error) {
	return appendCanonical(make([]byte, 0, len(src)), src)
}

// appendCanonical is Canonicalize appending to out, for a caller that
// checks many values with one buffer.
func appendCanonical(out, src []byte) ([]byte, error) {
	p := canonParser{b: src}
	p.skipSpace()
	out, err := p.value(out, 0)
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos != len(p.b) {
		return nil, p.errorf("trailing data after JSON value")
	}
	return out, nil
}

// IsCanonical reports whether b is already in canonical form.
func IsCanonical(b []byte) bool {
	scratch := make([]byte, 0, len(b))
	return isCanonical(b, &scratch)
}

// isCanonical is IsCanonical canonicalising into *scratch, which it
// keeps for the next call: a verify worker checks millions of entries
// without allocating a copy of each. Most are settled by one read in
// place (canonicalInPlace); the rest are canonicalised and compared.
func isCanonical(b []byte, scratch *[]byte) bool {
	if canonicalInPlace(b) {
		return true
	}
	c, err := appendCanonical((*scratch)[:0], b)
	if err != nil {
		return false
	}
	if cap(c) <= 1<<20 {
		*scratch = c // a huge entry's buffer is not kept
	}
	return bytes.Equal(c, b)
}

// MarshalCanonical encodes v with encoding/json and canonicalises the
// result. Floats and out-of-range integers in v are rejected.
func MarshalCanonical(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return Canonicalize(raw)
}

type canonParser struct {
	b   []byte
	pos int
	// blob is set by the scanner's skip (scan.go) when a string it
	// passes ends in the bytes blob (the input holds `blob"`).
	blob bool
}

// SyntaxError describes malformed or out-of-profile JSON.
type SyntaxError struct {
	Offset int
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("json: %s at offset %d", e.Msg, e.Offset)
}

func (p *canonParser) errorf(format string, args ...any) error {
	return &SyntaxError{Offset: p.pos, Msg: fmt.Sprintf(format, args...)}
}

func (p *canonParser) skipSpace() {
	if p.pos < len(p.b) && p.b[p.pos] > ' ' {
		return // the common case: canonical input has no white space
	}
	for p.pos < len(p.b) {
		switch p.b[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *canonParser) value(out []byte, depth int) ([]byte, error) {
	if depth > maxDepth {
		return nil, p.errorf("nesting deeper than %d", maxDepth)
	}
	if p.pos >= len(p.b) {
		return nil, p.errorf("unexpected end of input")
	}
	switch c := p.b[p.pos]; {
	case c == '{':
		return p.object(out, depth)
	case c == '[':
		return p.array(out, depth)
	case c == '"':
		s, err := p.strBytes()
		if err != nil {
			return nil, err
		}
		return appendCanonBytes(out, s), nil
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number(out)
	case c == 't':
		return p.literal(out, "true")
	case c == 'f':
		return p.literal(out, "false")
	case c == 'n':
		return p.literal(out, "null")
	default:
		return nil, p.errorf("unexpected character %q", c)
	}
}

func (p *canonParser) literal(out []byte, lit string) ([]byte, error) {
	if !bytes.HasPrefix(p.b[p.pos:], []byte(lit)) {
		return nil, p.errorf("invalid literal")
	}
	p.pos += len(lit)
	return append(out, lit...), nil
}

func (p *canonParser) number(out []byte) ([]byte, error) {
	start := p.pos
	neg := false
	if p.b[p.pos] == '-' {
		neg = true
		p.pos++
	}
	digits := p.pos
	for p.pos < len(p.b) && p.b[p.pos] >= '0' && p.b[p.pos] <= '9' {
		p.pos++
	}
	if p.pos == digits {
		return nil, p.errorf("invalid number")
	}
	if p.pos < len(p.b) {
		switch p.b[p.pos] {
		case '.', 'e', 'E':
			return nil, p.errorf("non-integer number (only integers are allowed)")
		}
	}
	if p.b[digits] == '0' && p.pos-digits > 1 {
		return nil, p.errorf("number with leading zero")
	}
	n, err := strconv.ParseUint(string(p.b[digits:p.pos]), 10, 64)
	if err != nil || n > MaxSafeInteger {
		return nil, &SyntaxError{Offset: start, Msg: "integer out of range (magnitude above 2^53-1)"}
	}
	if neg && n == 0 {
		return nil, &SyntaxError{Offset: start, Msg: "negative zero"}
	}
	if neg {
		out = append(out, '-')
	}
	return strconv.AppendUint(out, n, 10), nil
}

func (p *canonParser) array(out []byte, depth int) ([]byte, error) {
	p.pos++ // [
	out = append(out, '[')
	p.skipSpace()
	if p.pos < len(p.b) && p.b[p.pos] == ']' {
		p.pos++
		return append(out, ']'), nil
	}
	for {
		p.skipSpace()
		var err error
		if out, err = p.value(out, depth+1); err != nil {
			return nil, err
		}
		p.skipSpace()
		if p.pos >= len(p.b) {
			return nil, p.errorf("unexpected end of input in array")
		}
		switch p.b[p.pos] {
		case ',':
			p.pos++
			out = append(out, ',')
		case ']':
			p.pos++
			return append(out, ']'), nil
		default:
			return nil, p.errorf("expected , or ] in array")
		}
	}
}

type member struct {
	key        []byte // decoded; aliases the input when it had no escapes
	start, end int    // canonical "key":value within the output buffer
}

func (p *canonParser) object(out []byte, depth int) ([]byte, error) {
	p.pos++ // {
	out = append(out, '{')
	body := len(out)
	p.skipSpace()
	if p.pos < len(p.b) && p.b[p.pos] == '}' {
		p.pos++
		return append(out, '}'), nil
	}
	var stack [16]member // most objects are small: no allocation
	members := stack[:0]
	for {
		p.skipSpace()
		if p.pos >= len(p.b) || p.b[p.pos] != '"' {
			return nil, p.errorf("expected string key in object")
		}
		key, err := p.strBytes()
		if err != nil {
			return nil, err
		}
		p.skipSpace()
		if p.pos >= len(p.b) || p.b[p.pos] != ':' {
			return nil, p.errorf("expected : after object key")
		}
		p.pos++
		p.skipSpace()
		if len(members) > 0 {
			out = append(out, ',')
		}
		start := len(out)
		out = appendCanonBytes(out, key)
		out = append(out, ':')
		if out, err = p.value(out, depth+1); err != nil {
			return nil, err
		}
		members = append(members, member{key: key, start: start, end: len(out)})
		p.skipSpace()
		if p.pos >= len(p.b) {
			return nil, p.errorf("unexpected end of input in object")
		}
		if p.b[p.pos] == ',' {
			p.pos++
			continue
		}
		if p.b[p.pos] != '}' {
			return nil, p.errorf("expected , or } in object")
		}
		p.pos++
		break
	}
	sorted, dup := true, 0
	for i := 1; i < len(members); i++ {
		switch c := compareUTF16(members[i-1].key, members[i].key); {
		case c == 0 && dup == 0:
			dup = i
		case c > 0:
			sorted = false
		}
	}
	if sorted && dup > 0 {
		return nil, p.errorf("duplicate object key %q", members[dup].key)
	}
	if !sorted {
		// Rare: rebuild the body from a copy in key order.
		ms := append([]member(nil), members...)
		sort.SliceStable(ms, func(i, j int) bool { return compareUTF16(ms[i].key, ms[j].key) < 0 })
		for i := 1; i < len(ms); i++ {
			if compareUTF16(ms[i-1].key, ms[i].key) == 0 {
				return nil, p.errorf("duplicate object key %q", ms[i].key)
			}
		}
		old := append([]byte(nil), out[body:]...)
		out = out[:body]
		for i, m := range ms {
			if i > 0 {
				out = append(out, ',')
			}
			out = append(out, old[m.start-body:m.end-body]...)
		}
	}
	return append(out, '}'), nil
}

// compareUTF16 orders keys by their UTF-16 code units, as JCS requires.
// Byte order agrees with it except between two non-ASCII runes, so only
// then does it decode.
func compareUTF16(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	switch {
	case i == n:
		return len(a) - len(b)
	case a[i] < 0x80 || b[i] < 0x80:
		return int(a[i]) - int(b[i])
	}
	for i > 0 && !utf8.RuneStart(a[i]) {
		i--
	}
	as, bs := string(a[i:]), string(b[i:])
	switch {
	case lessUTF16(as, bs):
		return -1
	case lessUTF16(bs, as):
		return 1
	}
	return 0
}

// lessUTF16 orders strings by their UTF-16 code units, as JCS requires.
func lessUTF16(a, b string) bool {
	for a != "" && b != "" {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra != rb {
			ua, ub := utf16Units(ra), utf16Units(rb)
			if ua[0] != ub[0] {
				return ua[0] < ub[0]
			}
			return ua[1] < ub[1]
		}
		a, b = a[na:], b[nb:]
	}
	return len(a) < len(b)
}

func utf16Units(r rune) [2]uint16 {
	if r >= 0x10000 {
		hi, lo := utf16.EncodeRune(r)
		return [2]uint16{uint16(hi), uint16(lo)}
	}
	return [2]uint16{uint16(r), 0}
}

// str parses a JSON string at p.pos and returns its decoded value.
func (p *canonParser) str() (string, error) {
	b, err := p.strBytes()
	return string(b), err
}

// strBytes is str without the copy when the string has no escapes: the
// result then aliases the input.
func (p *canonParser) strBytes() ([]byte, error) {
	p.pos++ // opening quote
	start := p.pos
	// Fast path: no escapes, ASCII or valid UTF-8.
	p.pos = jsonscan.PlainRun(p.b, p.pos)
	for p.pos < len(p.b) {
		c := p.b[p.pos]
		if c == '"' {
			s := p.b[start:p.pos]
			if !utf8.Valid(s) {
				return nil, p.errorf("invalid UTF-8 in string")
			}
			p.pos++
			return s, nil
		}
		if c == '\\' {
			break
		}
		if c < 0x20 {
			return nil, p.errorf("control character in string")
		}
		p.pos++
	}
	buf := append([]byte(nil), p.b[start:p.pos]...)
	for p.pos < len(p.b) {
		c := p.b[p.pos]
		switch {
		case c == '"':
			if !utf8.Valid(buf) {
				return nil, p.errorf("invalid UTF-8 in string")
			}
			p.pos++
			return buf, nil
		case c < 0x20:
			return nil, p.errorf("control character in string")
		case c != '\\':
			buf = append(buf, c)
			p.pos++
			continue
		}
		if p.pos+1 >= len(p.b) {
			break
		}
		esc := p.b[p.pos+1]
		p.pos += 2
		switch esc {
		case '"', '\\', '/':
			buf = append(buf, esc)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, err := p.hex4()
			if err != nil {
				return nil, err
			}
			if utf16.IsSurrogate(r) {
				if r >= 0xDC00 || p.pos+1 >= len(p.b) || p.b[p.pos] != '\\' || p.b[p.pos+1] != 'u' {
					return nil, p.errorf("unpaired surrogate in string")
				}
				p.pos += 2
				r2, err := p.hex4()
				if err != nil {
					return nil, err
				}
				if r2 < 0xDC00 || r2 > 0xDFFF {
					return nil, p.errorf("unpaired surrogate in string")
				}
				r = utf16.DecodeRune(r, r2)
			}
			buf = utf8.AppendRune(buf, r)
		default:
			return nil, p.errorf("invalid escape \\%c", esc)
		}
	}
	return nil, p.errorf("unterminated string")
}

func (p *canonParser) hex4() (rune, error) {
	if p.pos+4 > len(p.b) {
		return 0, p.errorf("short \\u escape")
	}
	var r rune
	for _, c := range p.b[p.pos : p.pos+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, p.errorf("invalid \\u escape")
		}
	}
	p.pos += 4
	return r, nil
}

const lowerHex = "0123456789abcdef"

// appendCanonString appends s as a JCS string literal. s must be valid UTF-8.
func appendCanonString(out []byte, s string) []byte {
	out = append(out, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			out = append(out, '\\', '"')
		case c == '\\':
			out = append(out, '\\', '\\')
		case c >= 0x20:
			out = append(out, c)
		case c == '\b':
			out = append(out, '\\', 'b')
		case c == '\t':
			out = append(out, '\\', 't')
		case c == '\n':
			out = append(out, '\\', 'n')
		case c == '\f':
			out = append(out, '\\', 'f')
		case c == '\r':
			out = append(out, '\\', 'r')
		default:
			out = append(out, '\\', 'u', '0', '0', lowerHex[c>>4], lowerHex[c&0xf])
		}
	}
	return append(out, '"')
}

// appendCanonBytes is appendCanonString for a byte slice; a string with
// nothing to escape is copied as is.
func appendCanonBytes(out, s []byte) []byte {
	if jsonscan.PlainRun(s, 0) == len(s) {
		out = append(out, '"')
		out = append(out, s...)
		return append(out, '"')
	}
	return appendCanonString(out, string(s))
}
