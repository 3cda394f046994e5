package event

import (
	"fmt"
	"sort"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/tlog"
)

// CheckCheckpoints returns the check of the signed notes of a ledger's
// ledger.checkpoint entries (ledger.VerifyOptions.CheckCheckpoint), given
// the ledger's recorded keys (Keys): each note must be a checkpoint of
// the ledger's origin signed by the key recorded last before it, and name
// the tree the verifier computed from the entries. A checkpoint without a
// note (recorded before the ledger had a key) passes.
func CheckCheckpoints(ledgerID string, keys []RecordedKey) func(seq uint64, th ledger.TreeHead, note string) error {
	keys = append([]RecordedKey(nil), keys...)
	sort.Slice(keys, func(i, j int) bool { return keys[i].Seq < keys[j].Seq })
	origin := tlog.Origin(ledgerID)
	return func(seq uint64, th ledger.TreeHead, note string) error {
		i := sort.Search(len(keys), func(i int) bool { return keys[i].Seq >= seq })
		switch {
		case note == "" && i == 0:
			return nil
		case note == "":
			return fmt.Errorf("no signed note, though the key of entry %d signs this ledger's checkpoints (stripped?)", keys[i-1].Seq)
		case i == 0:
			return fmt.Errorf("signed note: %w: no ledger.key is recorded before it", tlog.ErrUnsigned)
		}
		k := keys[i-1]
		cp, err := tlog.Open([]byte(note), k.Verifier)
		if err != nil {
			return fmt.Errorf("signed note (key of entry %d): %w", k.Seq, err)
		}
		if cp.Origin != origin {
			return fmt.Errorf("signed note: origin %s, the ledger's is %s", cp.Origin, origin)
		}
		if cp.Size != th.Size || cp.Root != th.Root {
			return fmt.Errorf("signed note names tree %d %s, the entries make tree %d %s",
				cp.Size, cp.RootString(), th.Size, tlog.Checkpoint{Root: th.Root}.RootString())
		}
		return nil
	}
}

// StrictOptionsFor is StrictOptions for the ledger l, with each signed
// checkpoint checked against the key l records before it
// (CheckCheckpoints). Finding the keys reads the whole ledger once.
func StrictOptionsFor(l *ledger.Ledger) (ledger.VerifyOptions, error) {
	opts := StrictOptions()
	keys, err := Keys(l)
	if err != nil {
		return opts, err
	}
	opts.CheckCheckpoint = CheckCheckpoints(l.ID(), keys)
	return opts, nil
}

// StrictOptionsForSource is StrictOptionsFor for a ledger read through
// src (each batch of a LocalSource in its own short read transaction, so
// a reader inside the engine never blocks its commits): the keys are
// read from src's entries up to its head, in one pass before the verify.
func StrictOptionsForSource(src ledger.Source) (ledger.VerifyOptions, error) {
	opts := StrictOptions()
	h, err := src.Head()
	if err != nil {
		return opts, err
	}
	keys, err := SourceKeys(src, h.Seq)
	if err != nil {
		return opts, err
	}
	opts.CheckCheckpoint = CheckCheckpoints(h.LedgerID, keys)
	return opts, nil
}
