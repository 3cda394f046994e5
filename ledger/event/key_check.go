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
// the tree the verifier computed from the entries. The origin is the
// name of that recorded key (Origin): tlog.Origin(ledgerID) for a key
// under opx's default prefix (never another ledger's id), or the one a
// team chose (ledger.origin). A checkpoint without a note (recorded
// before the ledger had a key) passes.
func CheckCheckpoints(ledgerID string, keys []RecordedKey) func(seq uint64, th ledger.TreeHead, note string) error {
	keys = append([]RecordedKey(nil), keys...)
	sort.Slice(keys, func(i, j int) bool { return keys[i].Seq < keys[j].Seq })
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
		if origin := Origin(ledgerID, k.Verifier); cp.Origin != origin {
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

// Origin is the checkpoint origin a recorded key signs for in the ledger
// ledgerID: its name, unless the name is under opx's default prefix, in
// which case it can only be tlog.Origin(ledgerID) (a key of another
// ledger's id signs nothing of this one).
func Origin(ledgerID string, v tlog.Verifier) string {
	o, _ := tlog.KeyOrigin(ledgerID, v.Name())
	return o
}

// LatestOrigin is the origin of the ledger's checkpoints from the last
// recorded key on (keys as Keys returns them), tlog.Origin(ledgerID) when
// none is recorded.
func LatestOrigin(ledgerID string, keys []RecordedKey) string {
	best, at := tlog.Origin(ledgerID), uint64(0)
	for _, k := range keys {
		if k.Seq >= at {
			best, at = Origin(ledgerID, k.Verifier), k.Seq
		}
	}
	return best
}

// Origins is every origin the ledger's recorded keys signed for, and the
// default one.
func Origins(ledgerID string, keys []RecordedKey) map[string]bool {
	out := map[string]bool{tlog.Origin(ledgerID): true}
	for _, k := range keys {
		out[Origin(ledgerID, k.Verifier)] = true
	}
	return out
}
