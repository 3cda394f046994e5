package ledger

import (
	"unicode/utf8"

	"github.com/opx-dev/opx/internal/jsonscan"
)

// canonicalInPlace reports that b is in canonical form by reading it once,
// without writing the canonical form out and comparing (what isCanonical
// does, half of its cost). It answers true only when b is canonical:
// every value is as the canonicaliser writes it (no white space, integers
// without leading zeros or -0 within MaxSafeInteger, strings of valid
// UTF-8 escaping exactly what appendCanonString escapes, members in
// strictly increasing UTF-16 order of keys, nesting within maxDepth).
// False means "not sure": a key with an escape, or anything not
// canonical, is left to isCanonical, which decides. Strict verify asks
// this of every entry, nearly all canonical.
func canonicalInPlace(b []byte) bool {
	p := canonParser{b: b}
	return p.inPlaceValue(0) && p.pos == len(b)
}

func (p *canonParser) inPlaceValue(depth int) bool {
	if depth > maxDepth || p.pos >= len(p.b) {
		return false
	}
	switch c := p.b[p.pos]; {
	case c == '{':
		return p.inPlaceObject(depth)
	case c == '[':
		p.pos++
		if p.pos < len(p.b) && p.b[p.pos] == ']' {
			p.pos++
			return true
		}
		for {
			if !p.inPlaceValue(depth + 1) {
				return false
			}
			if p.pos >= len(p.b) {
				return false
			}
			switch p.b[p.pos] {
			case ',':
				p.pos++
			case ']':
				p.pos++
				return true
			default:
				return false
			}
		}
	case c == '"':
		return p.inPlaceString(true)
	case c == '-' || (c >= '0' && c <= '9'):
		return p.inPlaceNumber()
	case c == 't':
		return p.inPlaceLiteral("true")
	case c == 'f':
		return p.inPlaceLiteral("false")
	case c == 'n':
		return p.inPlaceLiteral("null")
	}
	return false
}

func (p *canonParser) inPlaceLiteral(lit string) bool {
	if len(p.b)-p.pos < len(lit) || string(p.b[p.pos:p.pos+len(lit)]) != lit {
		return false
	}
	p.pos += len(lit)
	return true
}

// inPlaceNumber accepts what number writes back unchanged.
func (p *canonParser) inPlaceNumber() bool {
	neg := p.b[p.pos] == '-'
	if neg {
		p.pos++
	}
	start := p.pos
	var n uint64
	for p.pos < len(p.b) && p.b[p.pos] >= '0' && p.b[p.pos] <= '9' {
		if p.pos-start >= 16 { // 2^53-1 has 16 digits
			return false
		}
		n = n*10 + uint64(p.b[p.pos]-'0')
		p.pos++
	}
	digits := p.pos - start
	if digits == 0 || n > MaxSafeInteger || (p.b[start] == '0' && (digits > 1 || neg)) {
		return false // none, too large, a leading zero or -0
	}
	if p.pos < len(p.b) {
		switch p.b[p.pos] {
		case '.', 'e', 'E':
			return false
		}
	}
	return true
}

// inPlaceString accepts a string as appendCanonString writes it. A key
// (escapes false) must have no escape at all, so that its bytes are
// the key inPlaceObject orders.
func (p *canonParser) inPlaceString(escapes bool) bool {
	p.pos++ // opening quote
	start := p.pos
	for {
		p.pos = jsonscan.PlainRun(p.b, p.pos)
		if p.pos >= len(p.b) {
			return false
		}
		switch c := p.b[p.pos]; {
		case c == '"':
			ok := utf8.Valid(p.b[start:p.pos])
			p.pos++
			return ok
		case c < 0x20 || !escapes:
			return false
		}
		// A backslash: only the escapes appendCanonString writes.
		if p.pos+1 >= len(p.b) {
			return false
		}
		switch p.b[p.pos+1] {
		case '"', '\\', 'b', 't', 'n', 'f', 'r':
			p.pos += 2
			continue
		case 'u':
		default:
			return false
		}
		if len(p.b)-p.pos < 6 || p.b[p.pos+2] != '0' || p.b[p.pos+3] != '0' {
			return false
		}
		hi, lo := p.b[p.pos+4], p.b[p.pos+5]
		if hi != '0' && hi != '1' || !(lo >= '0' && lo <= '9' || lo >= 'a' && lo <= 'f') {
			return false
		}
		switch c := (hi-'0')<<4 | hexVal(lo); c {
		case '\b', '\t', '\n', '\f', '\r':
			return false // written as \b, \t, \n, \f, \r
		}
		p.pos += 6
	}
}

func hexVal(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c - 'a' + 10
}

func (p *canonParser) inPlaceObject(depth int) bool {
	p.pos++ // {
	if p.pos < len(p.b) && p.b[p.pos] == '}' {
		p.pos++
		return true
	}
	var prev []byte
	for i := 0; ; i++ {
		if p.pos >= len(p.b) || p.b[p.pos] != '"' {
			return false
		}
		start := p.pos + 1
		if !p.inPlaceString(false) {
			return false
		}
		key := p.b[start : p.pos-1]
		if i > 0 && compareUTF16(prev, key) >= 0 {
			return false // out of order or twice
		}
		prev = key
		if p.pos >= len(p.b) || p.b[p.pos] != ':' {
			return false
		}
		p.pos++
		if !p.inPlaceValue(depth + 1) {
			return false
		}
		if p.pos >= len(p.b) {
			return false
		}
		switch p.b[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			return true
		default:
			return false
		}
	}
}
