package checkpoint

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/opx-dev/opx/ledger"
)

// Latest returns the last ledger.checkpoint entry at or below seq upto
// that holds a signed note, reading back from the head (checkpoints are
// recorded every few seconds, so it reads few entries); ok is false when
// there is none. A ledger.checkpoint that does not parse is an error
// wrapping ledger.ErrIntegrity.
func Latest(l *ledger.Ledger, upto uint64) (seq uint64, c ledger.CheckpointPayload, ok bool, err error) {
	suffix := []byte(`"type":"` + ledger.TypeCheckpoint + `"}`)
	err = l.Backward(func(s uint64, raw []byte) (bool, error) {
		if s > upto || !bytes.HasSuffix(raw, suffix) {
			return true, nil
		}
		e, err := ledger.ParseEntry(append([]byte(nil), raw...))
		if err != nil || e.Type != ledger.TypeCheckpoint {
			return false, fmt.Errorf("entry %d: %w: a ledger.checkpoint that does not parse", s, ledger.ErrIntegrity)
		}
		var p ledger.CheckpointPayload
		if err := json.Unmarshal(e.Data, &p); err != nil {
			return false, fmt.Errorf("entry %d: %w: a ledger.checkpoint that does not parse: %v", s, ledger.ErrIntegrity, err)
		}
		if p.Note == "" {
			return true, nil // recorded before the ledger had its key
		}
		seq, c, ok = s, p, true
		return false, nil
	})
	return seq, c, ok, err
}
