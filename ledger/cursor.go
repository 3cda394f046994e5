package ledger

import (
	"encoding/binary"
	"fmt"
	"regexp"

	bolt "go.etcd.io/bbolt"
)

// A cursor is a reader's position in the ledger that must survive a crash
// with the ledger itself (the fleet shipper's last acknowledged seq): meta
// key "cursor.<name>", 8 bytes big-endian. It is outside the chain: not
// hashed, not exported, not verified, and rewriting it changes no entry.
// Its owner writes it; SetCursor is one small bbolt transaction (one
// fsync), so an owner writes it at most about once a second.

var cursorNameRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)

func cursorKey(name string) ([]byte, error) {
	if !cursorNameRE.MatchString(name) {
		return nil, fmt.Errorf("ledger: cursor name %q: want 1 to 128 of [A-Za-z0-9_.-]", name)
	}
	return []byte("cursor." + name), nil
}

// Cursor returns the cursor name's value; ok is false when none was set.
func (l *Ledger) Cursor(name string) (seq uint64, ok bool, err error) {
	key, err := cursorKey(name)
	if err != nil {
		return 0, false, err
	}
	err = l.view(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketMeta).Get(key)
		switch {
		case v == nil:
			return nil
		case len(v) != 8:
			return fmt.Errorf("meta %s: %d bytes, want 8: %w", key, len(v), ErrUnreadable)
		}
		seq, ok = binary.BigEndian.Uint64(v), true
		return nil
	})
	return seq, ok, err
}

// SetCursor durably sets the cursor name to seq (read-only ledgers
// refuse: ErrReadOnly).
func (l *Ledger) SetCursor(name string, seq uint64) error {
	key, err := cursorKey(name)
	if err != nil {
		return err
	}
	if l.readOnly {
		return ErrReadOnly
	}
	return l.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketMeta).Put(key, binary.BigEndian.AppendUint64(nil, seq))
	})
}
