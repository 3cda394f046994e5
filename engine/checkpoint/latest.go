package checkpoint

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/opx-dev/opx/ledger"
)

// Ranger reads stored entries from..to in seq order, in one read
// transaction (ledger.Ledger.RangeRaw).
type Ranger interface {
	RangeRaw(from, to uint64, fn func(seq uint64, raw []byte) error) error
}

// latestBatch is how many entries one read transaction of Latest reads:
// a long read transaction would block bbolt's remap and with it the
// engine's commits.
const latestBatch = 4096

// Latest remembers the last ledger.checkpoint entry that holds a signed
// note, and the head it has read through, so that each lookup reads only
// the entries appended since the last one (a ledger with no signed
// checkpoint is read once, not at every prove). Entries are never
// rewritten, so what it read stays true. Its zero value has read nothing.
// It is safe for concurrent use.
type Latest struct {
	mu      sync.Mutex
	read    bool   // through is set
	through uint64 // entries 0..through were read
	seq     uint64
	c       ledger.CheckpointPayload
	ok      bool
}

// Find returns the last ledger.checkpoint entry at or below seq upto that
// holds a signed note; ok is false when there is none. It reads backward
// from upto to what it read before, latestBatch entries a read
// transaction, stopping at the first signed checkpoint. A
// ledger.checkpoint that does not parse is an error wrapping
// ledger.ErrIntegrity.
func (lt *Latest) Find(r Ranger, upto uint64) (seq uint64, c ledger.CheckpointPayload, ok bool, err error) {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	switch {
	case lt.read && upto <= lt.through && (!lt.ok || lt.seq <= upto):
		// The last signed one in 0..through is the last in 0..upto too.
		return lt.seq, lt.c, lt.ok, nil
	case lt.read && upto < lt.through:
		return scanBack(r, 0, upto) // before the one remembered: rare, not remembered
	}
	floor := uint64(0)
	if lt.read {
		floor = lt.through + 1
	}
	seq, c, ok, err = scanBack(r, floor, upto)
	if err != nil {
		return 0, c, false, err
	}
	if ok || !lt.read {
		lt.seq, lt.c, lt.ok = seq, c, ok
	}
	lt.read, lt.through = true, upto
	return lt.seq, lt.c, lt.ok, nil
}

// scanBack returns the last signed ledger.checkpoint in floor..upto,
// reading backward a batch a transaction.
func scanBack(r Ranger, floor, upto uint64) (seq uint64, c ledger.CheckpointPayload, ok bool, err error) {
	suffix := []byte(`"type":"` + ledger.TypeCheckpoint + `"}`)
	for hi := upto; ; hi -= latestBatch {
		lo := max(floor, hi-min(hi, latestBatch-1))
		// Read forward within the batch, as backward reading would: a
		// checkpoint that does not parse counts only when no signed one
		// follows it.
		var bad error
		err = r.RangeRaw(lo, hi, func(s uint64, raw []byte) error {
			if !bytes.HasSuffix(raw, suffix) {
				return nil
			}
			p, err := parseCheckpoint(s, raw)
			switch {
			case err != nil:
				bad = err
			case p.Note != "": // one without was recorded before the ledger had its key
				seq, c, ok, bad = s, p, true, nil
			}
			return nil
		})
		if err == nil && bad != nil {
			return 0, ledger.CheckpointPayload{}, false, bad
		}
		if err != nil || ok || lo == floor {
			return seq, c, ok, err
		}
	}
}

// parseCheckpoint decodes the stored ledger.checkpoint entry seq.
func parseCheckpoint(seq uint64, raw []byte) (ledger.CheckpointPayload, error) {
	var p ledger.CheckpointPayload
	e, err := ledger.ParseEntry(append([]byte(nil), raw...))
	if err != nil || e.Type != ledger.TypeCheckpoint {
		return p, fmt.Errorf("entry %d: %w: a ledger.checkpoint that does not parse", seq, ledger.ErrIntegrity)
	}
	if err := json.Unmarshal(e.Data, &p); err != nil {
		return p, fmt.Errorf("entry %d: %w: a ledger.checkpoint that does not parse: %v", seq, ledger.ErrIntegrity, err)
	}
	return p, nil
}
