package event

import (
	"encoding/binary"
	"encoding/json"
	"errors"

	"github.com/opx-dev/opx/ledger"
)

// KeysProjection folds the ledger.key entries into the bucket p.keys:
// seq (8 bytes, big-endian) -> verifier key. With it, the key recorded
// before a checkpoint is one seek away instead of a walk back through the
// ledger to wherever the key was recorded (a million entries back, on a
// long-lived ledger). Readers take only the seq from it and read and
// check the entry itself (KeyAt).
type KeysProjection struct{}

func (KeysProjection) Name() string    { return "keys" }
func (KeysProjection) Version() string { return "1" }

func (KeysProjection) Apply(b ledger.Bucket, e *ledger.Entry) error {
	if e.Type != TypeKey {
		return nil
	}
	var k Key
	if err := json.Unmarshal(e.Data, &k); err != nil {
		return err
	}
	return b.Put(binary.BigEndian.AppendUint64(nil, e.Seq), []byte(k.VKey))
}

// keySeqBefore returns the seq of the last ledger.key entry below before
// from the keys projection; ok is false when there is none. It fails
// when the file holds no up-to-date keys projection.
func keySeqBefore(l *ledger.Ledger, before uint64) (seq uint64, ok bool, err error) {
	err = l.ViewProjection(KeysProjection{}, func(b ledger.Bucket) error {
		c := b.Cursor()
		k, _ := c.Seek(binary.BigEndian.AppendUint64(nil, before))
		if k == nil {
			k, _ = c.Last()
		} else {
			k, _ = c.Prev()
		}
		if len(k) == 8 {
			seq, ok = binary.BigEndian.Uint64(k), true
		} else if k != nil {
			return errors.New("keys projection: a key that is not a seq")
		}
		return nil
	})
	return seq, ok, err
}
