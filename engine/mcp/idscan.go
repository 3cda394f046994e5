package mcp

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// idScanner finds the "id" member of the top-level object of a JSON-RPC
// message from a stream of its bytes, in constant memory: for a line too
// long to keep (its content is discarded as it goes by) or one that does
// not decode, so that the request it answers can be told it failed rather
// than wait for its timeout. Servers put the id first or last (the
// TypeScript SDK writes {"result":...,"jsonrpc":"2.0","id":N}), so every
// byte is looked at; the bytes inside strings are skipped in bulk.
//
// It is not a validator: it tracks strings, escapes and nesting, nothing
// more, and gives up on an id that is not a short string or an integer,
// or on a message with two different ids.
type idScanner struct {
	depth     int
	topObject bool // the top-level value is an object
	inString  bool
	escape    bool
	keyNext   bool // at depth 1, the next string is a member's key

	capture   int // what the current token is captured as (capNone...)
	buf       [maxIDBytes]byte
	n         int
	overflow  bool
	idState   int // idNone, idColon (saw key "id"), idValue (saw its ':')
	found     bool
	ambiguous bool
	id        jsonrpc.ID
}

// maxIDBytes bounds a captured key or id: longer ids are not looked up.
const maxIDBytes = 64

const (
	capNone = iota
	capKey
	capString
	capNumber
)

const (
	idNone = iota
	idColon
	idValue
)

// ID returns the id found, if exactly one was.
func (s *idScanner) ID() (jsonrpc.ID, bool) {
	if !s.found || s.ambiguous {
		return jsonrpc.ID{}, false
	}
	return s.id, true
}

// Write feeds the next bytes of the message; it never fails.
func (s *idScanner) Write(b []byte) (int, error) {
	n := len(b)
	for len(b) > 0 {
		if s.inString {
			if s.capture == capNone && !s.escape {
				// Bulk skip to the next quote or backslash.
				i := bytes.IndexAny(b, "\"\\")
				if i < 0 {
					return n, nil
				}
				b = b[i:]
			}
			c := b[0]
			b = b[1:]
			switch {
			case s.escape:
				s.escape = false
				s.keep(c)
			case c == '\\':
				s.escape = true
				s.keep(c)
			case c == '"':
				s.inString = false
				s.endToken()
			default:
				s.keep(c)
			}
			continue
		}
		c := b[0]
		b = b[1:]
		if s.capture == capNumber {
			if (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' {
				s.keep(c)
				continue
			}
			s.endToken()
		}
		s.structural(c)
	}
	return n, nil
}

func (s *idScanner) structural(c byte) {
	switch c {
	case ' ', '\t', '\r', '\n':
		return
	case '"':
		s.inString = true
		switch {
		case s.depth == 1 && s.topObject && s.keyNext:
			s.begin(capKey)
			s.keyNext = false
		case s.depth == 1 && s.idState == idValue:
			s.begin(capString)
		}
		return
	case ':':
		if s.depth == 1 && s.idState == idColon {
			s.idState = idValue
			return
		}
	case ',':
		if s.depth == 1 && s.topObject {
			s.keyNext = true
		}
	case '{', '[':
		if s.depth == 0 && c == '{' {
			s.topObject = true
			s.keyNext = true
		}
		s.depth++
	case '}', ']':
		s.depth--
	default:
		if s.depth == 1 && s.idState == idValue && (c == '-' || (c >= '0' && c <= '9')) {
			s.begin(capNumber)
			s.keep(c)
			return
		}
	}
	// Anything else after "id" or its ':' means the id is not one to
	// look up (null, an object, a literal).
	s.idState = idNone
}

func (s *idScanner) begin(what int) {
	s.capture, s.n, s.overflow = what, 0, false
}

func (s *idScanner) keep(c byte) {
	if s.capture == capNone {
		return
	}
	if s.n == len(s.buf) {
		s.overflow = true
		return
	}
	s.buf[s.n] = c
	s.n++
}

func (s *idScanner) endToken() {
	what := s.capture
	s.capture = capNone
	if what == capNone {
		return
	}
	text := s.buf[:s.n]
	switch what {
	case capKey:
		if !s.overflow && string(text) == "id" {
			s.idState = idColon
		} else {
			s.idState = idNone
		}
		return
	case capString:
		s.idState = idNone
		if s.overflow {
			return
		}
		var v string
		if json.Unmarshal(append(append([]byte{'"'}, text...), '"'), &v) != nil {
			return
		}
		s.setID(jsonrpc.MakeID(v))
	case capNumber:
		s.idState = idNone
		if s.overflow {
			return
		}
		v, err := strconv.ParseInt(string(text), 10, 64)
		if err != nil {
			return
		}
		s.setID(jsonrpc.MakeID(float64(v)))
	}
}

func (s *idScanner) setID(id jsonrpc.ID, err error) {
	if err != nil {
		return
	}
	if s.found && s.id != id {
		s.ambiguous = true
	}
	s.found, s.id = true, id
}

// finish ends the message: a number at its very end is complete (a
// string or key cut off is not).
func (s *idScanner) finish() {
	if s.capture == capNumber {
		s.endToken()
	}
}

// scanID runs an idScanner over a whole message.
func scanID(b []byte) (jsonrpc.ID, bool) {
	var s idScanner
	s.Write(b)
	s.finish()
	return s.ID()
}
