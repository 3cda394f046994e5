package event

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/opx-dev/opx/ledger"
)

// Payload is the typed data of one entry type.
type Payload interface {
	// Type returns the entry type the payload belongs to.
	Type() string
	// Validate reports a payload that lacks a required field or holds an
	// impossible value.
	Validate() error
}

var (
	// ErrUnknownType is returned by Check and Decode for a type that is not
	// in the taxonomy.
	ErrUnknownType = errors.New("unknown entry type")
	// ErrInvalidPayload is returned (wrapped) by Check and Decode for a
	// payload that does not decode strictly or does not validate.
	ErrInvalidPayload = errors.New("invalid payload")
)

// registry maps each type to a constructor of its zero payload.
var registry = map[string]func() Payload{}

func register(f func() Payload) {
	typ := f().Type()
	if _, dup := registry[typ]; dup {
		panic("event: type registered twice: " + typ)
	}
	registry[typ] = f
}

// Types returns every entry type of the taxonomy, sorted.
func Types() []string {
	out := make([]string, 0, len(registry))
	for t := range registry {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// New returns a new zero payload for typ, or false for an unknown type.
func New(typ string) (Payload, bool) {
	f, ok := registry[typ]
	if !ok {
		return nil, false
	}
	return f(), true
}

// Check decodes data strictly as typ's payload and validates it. It is the
// payload check of `opx ledger verify --strict` (ledger.VerifyOptions.CheckPayload).
//
// Most payloads take the fast path (check_fast.go), which fills the struct
// from one scan of the bytes; anything it is not sure of, and every
// payload that does not validate, is decoded here by encoding/json, so the
// verdict and the error are always those of the reference path.
func Check(typ string, data []byte) error {
	if fastCheck(typ, data) {
		return nil
	}
	_, err := decode(typ, data)
	return err
}

// Decode returns the typed payload of an entry.
func Decode(e ledger.Entry) (Payload, error) {
	p, err := decode(e.Type, e.Data)
	if err != nil {
		return nil, fmt.Errorf("entry %d: %w", e.Seq, err)
	}
	return p, nil
}

// DecodeFast is Decode through the fast path of Check (check_fast.go)
// where it applies: the same payload and the same verdict, encoding/json
// only for what the fast path is not sure of and for every payload that
// does not validate. For readers of many entries (telemetry's export).
func DecodeFast(e ledger.Entry) (Payload, error) {
	if p, ok := fastDecode(e.Type, e.Data, false); ok && p.Validate() == nil {
		return p, nil
	}
	return Decode(e)
}

// decode is the reference path: decodeJSON, then Validate.
func decode(typ string, data []byte) (Payload, error) {
	p, err := decodeJSON(typ, data)
	if err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInvalidPayload, typ, err)
	}
	return p, nil
}

// decodeJSON decodes data strictly as typ's payload with encoding/json:
// unknown members are errors, and so is a further value after it.
func decodeJSON(typ string, data []byte) (Payload, error) {
	p, ok := New(typ)
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownType, typ)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(p); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInvalidPayload, typ, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: %s: trailing data", ErrInvalidPayload, typ)
	}
	return p, nil
}

// Record makes a ledger record of a payload; blobs are stored in the same
// transaction as the entry (each must be named by a blob member of p). It
// validates p first, so the engine cannot write a payload strict verify
// would reject.
func Record(session string, p Payload, blobs ...[]byte) (ledger.Record, error) {
	if err := p.Validate(); err != nil {
		return ledger.Record{}, fmt.Errorf("%w: %s: %v", ErrInvalidPayload, p.Type(), err)
	}
	return ledger.Record{Session: session, Type: p.Type(), Data: p, Blobs: blobs}, nil
}

// MustRecord is Record for payloads built by the caller's own code, where
// an invalid payload is a programming error.
func MustRecord(session string, p Payload, blobs ...[]byte) ledger.Record {
	r, err := Record(session, p, blobs...)
	if err != nil {
		panic(err)
	}
	return r
}

// Usage counts the tokens of one model call or response.
type Usage struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
	TotalTokens  int64 `json:"total_tokens"`
}

func (u Usage) validate() error {
	if u.InputTokens < 0 || u.OutputTokens < 0 || u.TotalTokens < 0 {
		return errors.New("negative token count")
	}
	return nil
}

// ToolCall is one tool call a model asked for.
type ToolCall struct {
	CallID    string `json:"call_id"`
	Tool      string `json:"tool"`
	Arguments string `json:"arguments"` // the JSON text exactly as the model produced it
}

func (c ToolCall) validate() error {
	return need("call_id", c.CallID, "tool", c.Tool)
}

// need reports the first empty field of name/value pairs.
func need(pairs ...string) error {
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] == "" {
			return fmt.Errorf("%s is required", pairs[i])
		}
	}
	return nil
}

// isLowerHex reports whether s is exactly n lower-case hex digits: what
// the regexp ^[0-9a-f]{n}$ matches, at a small part of its cost (strict
// verify checks every hash member of every entry).
func isLowerHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// needHash reports a field that is not a 64-hex hash; optional allows "".
func needHash(name, v string, optional bool) error {
	if v == "" && optional {
		return nil
	}
	if !isLowerHex(v, 64) {
		return fmt.Errorf("%s %q is not a 64-hex BLAKE3 hash", name, v)
	}
	return nil
}

// needBlob is needHash for a member naming a blob, which in an
// off-the-record session may instead hold its withheld form (withhold.go).
func needBlob(name, v string, optional bool) error {
	if _, ok := Withheld(v); ok {
		return nil
	}
	return needHash(name, v, optional)
}

// oneOf reports v not in allowed.
func oneOf(name, v string, allowed ...string) error {
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return fmt.Errorf("%s %q is not one of %q", name, v, allowed)
}

// firstErr returns the first non-nil error.
func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// sum returns the hex BLAKE3 of b.
func sum(b []byte) string { return ledger.Sum(b).String() }
