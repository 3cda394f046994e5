package ledger

import (
	"bytes"
)

// Folds read entries as the writer stored them: canonical, with the six
// members in a fixed order and data, by far the largest, first. The
// envelope is then read backwards from the closing brace, without
// walking data:
//
//	{"data":{...},"prev":"<64 hex>","seq":N,"session":"s","ts":"t","type":"x"}
//
// When the strings hold no quote or backslash, every quote in that tail
// is a delimiter, so in a well-formed entry its members are top-level
// ones and data is what comes before them: the fast path reads what
// ParseEntry reads.
//
// parseForFold takes that path when the envelope is exactly canonical
// and its strings are printable ASCII, and parses with ParseEntry
// otherwise. On that path data is not checked for well-formed JSON
// (folds read it with Field and encoding/json, which reject what they
// cannot read; verify checks every entry's syntax).

var (
	envHead    = []byte(`{"data":`)
	envPrev    = []byte(`,"prev":"`)
	envSeq     = []byte(`","seq":`)
	envSession = []byte(`,"session":"`)
	envTS      = []byte(`","ts":"`)
	envType    = []byte(`","type":"`)
)

// interner returns one string for equal byte strings it has seen: session
// ids and entry types repeat across a batch, and each would otherwise be
// an allocation per entry. The zero value does not intern.
type interner struct{ m map[string]string }

func newInterner() *interner { return &interner{m: map[string]string{}} }

func (in *interner) str(b []byte) string {
	if in == nil || in.m == nil {
		return string(b)
	}
	if s, ok := in.m[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(in.m) < 1<<12 {
		in.m[s] = s
	}
	return s
}

// parseForFold parses stored entry bytes for a fold (see above).
func parseForFold(raw []byte, in *interner) (Entry, error) {
	if e, ok := parseEnvelope(raw, in); ok {
		return e, nil
	}
	return ParseEntry(raw)
}

// parseEnvelope is the fast path of parseForFold; ok is false when raw is
// not in the exact form it reads. It reads the envelope backwards from
// the closing brace: type, ts and session are strings without quotes or
// backslashes, so each opening quote is the last quote before the
// closing one.
func parseEnvelope(raw []byte, in *interner) (e Entry, ok bool) {
	n := len(raw)
	if n < len(envHead)+2 || !bytes.HasPrefix(raw, envHead) || raw[n-1] != '}' || raw[n-2] != '"' {
		return e, false
	}
	p := n - 2 // the closing quote of type
	var typ, ts, session []byte
	if typ, p, ok = envStringBack(raw, p, envType); !ok {
		return e, false
	}
	if ts, p, ok = envStringBack(raw, p, envTS); !ok {
		return e, false
	}
	if session, p, ok = envStringBack(raw, p, envSession); !ok {
		return e, false
	}
	// p is just past seq's digits.
	d := p
	for d > 0 && raw[d-1] >= '0' && raw[d-1] <= '9' {
		d--
	}
	seq, ok := envUint(raw[d:p])
	if !ok || !bytes.HasSuffix(raw[:d], envSeq) {
		return e, false
	}
	p = d - len(envSeq) // just past prev's hex
	if p-64-len(envPrev) < len(envHead)+2 || !bytes.HasSuffix(raw[:p-64], envPrev) {
		return e, false
	}
	prev, err := parseHashBytes(raw[p-64 : p])
	if err != nil {
		return e, false
	}
	data := raw[len(envHead) : p-64-len(envPrev)]
	if data[0] != '{' || data[len(data)-1] != '}' {
		return e, false
	}
	return Entry{Seq: seq, Prev: prev, TS: string(ts), Session: in.str(session), Type: in.str(typ), Data: data, Raw: raw}, true
}

// envStringBack reads back from p, the closing quote of a string preceded
// by the member prefix lit (which ends with the opening quote): it
// returns the string's bytes and the position of lit, if they are all
// printable ASCII without a backslash (such a string is its own
// decoding).
func envStringBack(raw []byte, p int, lit []byte) ([]byte, int, bool) {
	q := bytes.LastIndexByte(raw[:p], '"')
	if q < 0 || !bytes.HasSuffix(raw[:q+1], lit) {
		return nil, p, false
	}
	s := raw[q+1 : p]
	for _, c := range s {
		if c == '\\' || c < 0x20 || c > 0x7e {
			return nil, p, false
		}
	}
	return s, q + 1 - len(lit), true
}

// envUint reads a canonical unsigned integer: digits, no leading zero,
// at most MaxSafeInteger.
func envUint(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 16 || (b[0] == '0' && len(b) > 1) {
		return 0, false // over 16 digits is over MaxSafeInteger
	}
	var n uint64
	for _, c := range b {
		n = n*10 + uint64(c-'0')
	}
	return n, n <= MaxSafeInteger
}
