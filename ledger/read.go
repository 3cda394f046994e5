package ledger

import (
	"encoding/binary"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// errStop ends an iteration early without an error.
var errStop = errors.New("stop")

// Get returns the committed entry with the given seq. Its Raw is a copy,
// safe to keep.
func (l *Ledger) Get(seq uint64) (Entry, error) {
	var e Entry
	err := l.view(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketEntries).Get(seqKey(seq))
		if v == nil {
			return fmt.Errorf("entry %d: %w", seq, ErrNotFound)
		}
		var err error
		e, err = parseStored(seq, append([]byte(nil), v...))
		return err
	})
	return e, err
}

// Range calls fn for each committed entry with from <= seq <= to, in
// order, stopping at the first error fn returns (returned as is). Entries
// passed to fn own their bytes. An entry that does not parse stops the
// range with an error naming its seq.
func (l *Ledger) Range(from, to uint64, fn func(Entry) error) error {
	return l.RangeRaw(from, to, func(seq uint64, raw []byte) error {
		e, err := parseStored(seq, append([]byte(nil), raw...))
		if err != nil {
			return err
		}
		return fn(e)
	})
}

// RangeRaw calls fn with the stored bytes of each committed entry with
// from <= seq <= to. raw is only valid during the call: it points into
// the memory-mapped file.
func (l *Ledger) RangeRaw(from, to uint64, fn func(seq uint64, raw []byte) error) error {
	err := l.view(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketEntries).Cursor()
		for k, v := c.Seek(seqKey(from)); k != nil; k, v = c.Next() {
			if len(k) != 8 {
				return fmt.Errorf("entry key %x: %w", k, ErrNotLedger)
			}
			seq := binary.BigEndian.Uint64(k)
			if seq > to {
				return nil
			}
			if err := fn(seq, v); err != nil {
				return err
			}
		}
		return nil
	})
	if errors.Is(err, errStop) {
		return nil
	}
	return err
}

// Backward calls fn with the stored bytes of each committed entry from the
// head down, until fn returns false or an error (returned as is). raw is
// only valid during the call.
func (l *Ledger) Backward(fn func(seq uint64, raw []byte) (bool, error)) error {
	return l.view(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketEntries).Cursor()
		for k, v := c.Last(); k != nil; k, v = c.Prev() {
			if len(k) != 8 {
				return fmt.Errorf("entry key %x: %w", k, ErrNotLedger)
			}
			more, err := fn(binary.BigEndian.Uint64(k), v)
			if err != nil || !more {
				return err
			}
		}
		return nil
	})
}

// Tail returns up to n of the last committed entries, oldest first.
func (l *Ledger) Tail(n int) ([]Entry, error) {
	var out []Entry
	err := l.view(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketEntries).Cursor()
		for k, v := c.Last(); k != nil && len(out) < n; k, v = c.Prev() {
			if len(k) != 8 {
				return &IntegrityError{Kind: KindUnreadable, Detail: fmt.Sprintf("entry key %x is not 8 bytes", k)}
			}
			e, err := parseStored(beUint64(k), append([]byte(nil), v...))
			if err != nil {
				return err
			}
			out = append(out, e)
		}
		return nil
	})
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, err
}

// parseStored parses the stored bytes of entry seq; a value that does not
// parse, or names another seq, is an integrity finding, not a plain error.
func parseStored(seq uint64, raw []byte) (Entry, error) {
	e, err := ParseEntry(raw)
	if err != nil {
		return e, &IntegrityError{Seq: seq, Kind: KindUnreadable, Detail: "entry does not parse: " + err.Error()}
	}
	if e.Seq != seq {
		return e, &IntegrityError{Seq: seq, Kind: KindSeqMismatch, Detail: fmt.Sprintf("entry stored under key %d says seq %d", seq, e.Seq),
			Expected: fmt.Sprint(seq), Found: fmt.Sprint(e.Seq)}
	}
	return e, nil
}
