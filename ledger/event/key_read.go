package event

import (
	"bytes"
	"fmt"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/tlog"
)

// RecordedKey is a ledger.key entry: the key that signs the ledger's
// checkpoints from Seq on.
type RecordedKey struct {
	Seq      uint64
	Key      Key
	Verifier tlog.Verifier
}

// KeyAt returns the last ledger.key entry with seq below before (the key
// that signed a checkpoint recorded at before); ok is false when there is
// none. It finds it with the keys projection when the file holds it up
// to date (one seek), else by reading the ledger backward from its head;
// either way the entry itself is read and checked.
func KeyAt(l *ledger.Ledger, before uint64) (k RecordedKey, ok bool, err error) {
	if seq, found, perr := keySeqBefore(l, before); perr == nil {
		if !found {
			return k, false, nil
		}
		e, err := l.Get(seq)
		if err != nil {
			return k, false, err
		}
		k, err = parseKey(seq, e.Raw)
		return k, err == nil, err
	}
	suffix := []byte(`"type":"` + TypeKey + `"}`)
	err = l.Backward(func(seq uint64, raw []byte) (bool, error) {
		if seq >= before || !bytes.HasSuffix(raw, suffix) {
			return true, nil
		}
		k, err = parseKey(seq, raw)
		ok = err == nil
		return false, err
	})
	return k, ok, err
}

// ParseKeyEntry decodes and checks the stored bytes of a ledger.key
// entry (read through the engine, say).
func ParseKeyEntry(seq uint64, raw []byte) (RecordedKey, error) { return parseKey(seq, raw) }

// parseKey decodes and checks a stored ledger.key entry.
func parseKey(seq uint64, raw []byte) (RecordedKey, error) {
	e, err := ledger.ParseEntry(append([]byte(nil), raw...))
	if err != nil {
		return RecordedKey{}, fmt.Errorf("entry %d: %w", seq, err)
	}
	if e.Type != TypeKey {
		return RecordedKey{}, fmt.Errorf("entry %d: %w: type %q, not %s", seq, ErrInvalidPayload, e.Type, TypeKey)
	}
	p, err := Decode(e)
	if err != nil {
		return RecordedKey{}, err
	}
	k := *p.(*Key)
	v, err := tlog.ParseVerifierKey(k.VKey)
	if err != nil {
		return RecordedKey{}, fmt.Errorf("entry %d: %w", seq, err)
	}
	return RecordedKey{Seq: seq, Key: k, Verifier: v}, nil
}

// Keys returns every ledger.key entry of l that parses, in seq order. It
// reads the whole ledger. One that does not parse is left out: strict
// verify reports it, and no checkpoint verifies with it.
func Keys(l *ledger.Ledger) ([]RecordedKey, error) {
	h, err := l.Head()
	if err != nil {
		return nil, err
	}
	suffix := []byte(`"type":"` + TypeKey + `"}`)
	var out []RecordedKey
	err = l.RangeRaw(0, h.Seq, func(seq uint64, raw []byte) error {
		if !bytes.HasSuffix(raw, suffix) {
			return nil
		}
		if k, err := parseKey(seq, raw); err == nil {
			out = append(out, k)
		}
		return nil
	})
	return out, err
}

// SourceKeys is Keys for a ledger read through src, up to entry to.
func SourceKeys(src ledger.Source, to uint64) ([]RecordedKey, error) {
	suffix := []byte(`"type":"` + TypeKey + `"}`)
	var out []RecordedKey
	err := src.Entries(0, to, func(seq uint64, raw []byte) error {
		if !bytes.HasSuffix(raw, suffix) {
			return nil
		}
		if k, err := parseKey(seq, raw); err == nil {
			out = append(out, k)
		}
		return nil
	})
	return out, err
}
