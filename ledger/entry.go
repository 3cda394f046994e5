package ledger

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
	"unsafe"

	"github.com/zeebo/blake3"
)

// Hash is a BLAKE3-256 digest: of an entry's bytes, or of a blob's
// uncompressed content.
type Hash [32]byte

// ZeroHash is the prev of the genesis entry.
var ZeroHash Hash

// Sum returns the BLAKE3-256 of b.
func Sum(b []byte) Hash { return Hash(blake3.Sum256(b)) }

// String returns the lowercase hex form used everywhere in the format.
func (h Hash) String() string { return hex.EncodeToString(h[:]) }

// IsZero reports whether h is all zeros.
func (h Hash) IsZero() bool { return h == ZeroHash }

// MarshalText implements encoding.TextMarshaler (lowercase hex).
func (h Hash) MarshalText() ([]byte, error) { return []byte(h.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler; see ParseHash.
func (h *Hash) UnmarshalText(b []byte) error {
	v, err := parseHashBytes(b)
	if err != nil {
		return err
	}
	*h = v
	return nil
}

// ParseHash parses 64 lowercase hex characters.
func ParseHash(s string) (Hash, error) { return parseHashBytes([]byte(s)) }

func parseHashBytes(b []byte) (Hash, error) {
	var h Hash
	if len(b) != 64 {
		return h, fmt.Errorf("hash %q: want 64 hex characters, got %d", truncate(string(b), 80), len(b))
	}
	// Table lookups, no branches per character: prev hashes are random
	// hex, so a digit-or-letter branch mispredicts half the time.
	var bad byte
	for i := 0; i < 32; i++ {
		hi, lo := unhexTable[b[2*i]], unhexTable[b[2*i+1]]
		bad |= hi | lo
		h[i] = hi<<4 | lo&0xf
	}
	if bad&0xf0 != 0 {
		return h, fmt.Errorf("hash %q: not lowercase hex", truncate(string(b), 80))
	}
	return h, nil
}

// unhexTable maps a lowercase hex digit to its value and anything else
// to 0xff.
var unhexTable = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = byte(c - '0')
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c] = byte(c - 'a' + 10)
	}
	return t
}()

// TimeLayout is the entry timestamp layout: RFC 3339 UTC with exactly nine
// fractional digits, so timestamps have a fixed width.
const TimeLayout = "2006-01-02T15:04:05.000000000Z"

// Entry is one decoded ledger entry. Raw holds the stored bytes, which are
// exactly the bytes hashed; every other field is decoded from Raw.
type Entry struct {
	Seq     uint64
	Prev    Hash
	TS      string // RFC 3339 UTC, nanoseconds; informational, order is Seq
	Session string
	Type    string
	Data    json.RawMessage
	Raw     []byte
}

// Hash returns the entry's hash: BLAKE3-256 of its stored bytes.
func (e *Entry) Hash() Hash { return Sum(e.Raw) }

// Time parses TS.
func (e *Entry) Time() (time.Time, error) { return time.Parse(time.RFC3339Nano, e.TS) }

// encodeEntry builds the canonical bytes of an entry. data must already be
// canonical; session and typ are escaped here. Because the top-level keys
// are fixed and written in sorted order, the result is canonical whenever
// data is.
func encodeEntry(buf []byte, seq uint64, prev Hash, ts time.Time, session, typ string, data []byte) []byte {
	buf = append(buf, `{"data":`...)
	buf = append(buf, data...)
	buf = append(buf, `,"prev":"`...)
	buf = hex.AppendEncode(buf, prev[:])
	buf = append(buf, `","seq":`...)
	buf = strconv.AppendUint(buf, seq, 10)
	buf = append(buf, `,"session":`...)
	buf = appendCanonString(buf, session)
	buf = append(buf, `,"ts":"`...)
	buf = ts.UTC().AppendFormat(buf, TimeLayout)
	buf = append(buf, `","type":`...)
	buf = appendCanonString(buf, typ)
	return append(buf, '}')
}

// ParseEntry decodes stored entry bytes. It accepts any well-formed JSON
// object with exactly the six entry members (in any order, with any white
// space) so that verify can report a non-canonical entry rather than an
// unreadable one; use IsCanonical to check the form. Data aliases raw.
func ParseEntry(raw []byte) (Entry, error) { return parseEntry(raw, nil) }

// entryStrings is a verify worker's table of the strings its entries
// repeat (a ledger has a few types and sessions across millions of
// entries): each is allocated once rather than once an entry.
type entryStrings struct {
	m map[string]string
	// lean: ts and session are checked but not kept (Entry.TS and
	// Entry.Session are ""), for the default verify, which reads neither.
	lean bool
	// shareTS: a ts without escapes shares the entry's bytes instead of
	// a copy (strict verify, whose entries live no longer than their
	// bytes: VerifyOptions.CheckOrder).
	shareTS bool
	// canon: parseEntryLaidOut looks for canonical form on the way, and
	// canonical says it found the entry parsed last canonical (false:
	// not known).
	canon, canonical bool
	// dataBlob is whether the data of the entry parsed last holds the
	// bytes `blob"` (BlobRefs' precheck), as the syntax check of the data
	// saw them: verify need not search the data again.
	dataBlob bool
}

// maxEntryStrings bounds an entryStrings table: past it, strings are
// allocated as ParseEntry does.
const maxEntryStrings = 4096

// str reads a JSON string at s as scanner.str does, from the table when
// it holds it.
func (t *entryStrings) str(s *scanner) (string, error) {
	if t == nil {
		return s.str()
	}
	if s.pos >= len(s.b) || s.b[s.pos] != '"' {
		return "", s.fail("expected string")
	}
	b, err := s.p().strBytes()
	if err != nil {
		return "", err
	}
	if v, ok := t.m[string(b)]; ok {
		return v, nil
	}
	v := string(b)
	if t.m == nil {
		t.m = map[string]string{}
	}
	if len(t.m) < maxEntryStrings {
		t.m[v] = v
	}
	return v, nil
}

// ts reads the ts member's string: kept, or when lean checked only.
func (t *entryStrings) ts(s *scanner) (string, error) {
	switch {
	case t == nil || !t.lean && !t.shareTS:
		return s.str()
	case t.lean:
		return "", s.checkStr()
	}
	if s.pos >= len(s.b) || s.b[s.pos] != '"' {
		return "", s.fail("expected string")
	}
	start := s.pos + 1
	b, err := s.p().strBytes()
	if err != nil {
		return "", err
	}
	// Without escapes b is the bytes between the quotes; any escape
	// makes the decoded string shorter than its span.
	if len(b) > 0 && len(b) == s.pos-1-start {
		return unsafe.String(&b[0], len(b)), nil
	}
	return string(b), nil
}

// session reads the session member's string: from the table, or when
// lean checked only.
func (t *entryStrings) session(s *scanner) (string, error) {
	if t == nil || !t.lean {
		return t.str(s)
	}
	return "", s.checkStr()
}

// noteData keeps what the scan of an entry's data saw.
func (t *entryStrings) noteData(s *scanner) {
	if t != nil {
		t.dataBlob = s.blob
	}
}

// parseEntry is ParseEntry taking session and type from t (nil: none).
func parseEntry(raw []byte, t *entryStrings) (Entry, error) {
	if e, ok := parseEntryLaidOut(raw, t); ok {
		return e, nil
	}
	return parseEntryAnyLayout(raw, t)
}

// parseEntryAnyLayout reads the members in any order, with any white
// space, and words what is wrong.
func parseEntryAnyLayout(raw []byte, t *entryStrings) (Entry, error) {
	e := Entry{Raw: raw}
	s := scanner{b: raw}
	s.space()
	if !s.eat('{') {
		return e, s.fail("entry is not a JSON object")
	}
	var seen uint8
	const (
		fData = 1 << iota
		fPrev
		fSeq
		fSession
		fTS
		fType
		fAll = fData | fPrev | fSeq | fSession | fTS | fType
	)
	s.space()
	if s.eat('}') {
		return e, s.fail("empty entry object")
	}
	for {
		s.space()
		key, err := s.keyBytes()
		if err != nil {
			return e, err
		}
		s.space()
		if !s.eat(':') {
			return e, s.fail("expected :")
		}
		s.space()
		var bit uint8
		switch string(key) {
		case "data":
			bit = fData
			start := s.pos
			s.blob = false
			if err := s.skipValue(0); err != nil {
				return e, err
			}
			t.noteData(&s)
			e.Data = raw[start:s.pos]
			if raw[start] != '{' {
				return e, s.fail("data is not an object")
			}
		case "prev":
			bit = fPrev
			v, err := s.rawStr()
			if err != nil {
				return e, err
			}
			if e.Prev, err = parseHashBytes(v); err != nil {
				return e, fmt.Errorf("prev: %w", err)
			}
		case "seq":
			bit = fSeq
			if e.Seq, err = s.uint(); err != nil {
				return e, err
			}
		case "session":
			bit = fSession
			if e.Session, err = t.session(&s); err != nil {
				return e, err
			}
		case "ts":
			bit = fTS
			if e.TS, err = t.ts(&s); err != nil {
				return e, err
			}
		case "type":
			bit = fType
			if e.Type, err = t.str(&s); err != nil {
				return e, err
			}
		default:
			return e, s.fail(fmt.Sprintf("unknown entry member %q", truncate(string(key), 40)))
		}
		if seen&bit != 0 {
			return e, s.fail(fmt.Sprintf("duplicate entry member %q", key))
		}
		seen |= bit
		s.space()
		if s.eat(',') {
			continue
		}
		if s.eat('}') {
			break
		}
		return e, s.fail("expected , or }")
	}
	s.space()
	if s.pos != len(raw) {
		return e, s.fail("trailing data after entry")
	}
	if seen != fAll {
		return e, fmt.Errorf("entry lacks members: have %s", memberList(seen))
	}
	return e, nil
}

func memberList(seen uint8) string {
	names := []string{"data", "prev", "seq", "session", "ts", "type"}
	out := ""
	for i, n := range names {
		if seen&(1<<i) != 0 {
			if out != "" {
				out += ","
			}
			out += n
		}
	}
	if out == "" {
		return "none"
	}
	return out
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// unmarshalStrict decodes JSON, refusing unknown fields.
func unmarshalStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}
