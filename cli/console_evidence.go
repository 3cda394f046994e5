package cli

import (
	"sync"

	"github.com/opx-dev/opx/engine/checkpoint"
	"github.com/opx-dev/opx/ledger"
)

// evidenceBatch is how many entries one read transaction of the evidence
// fold reads (as checkpoint.Latest reads): a long read transaction would
// hold bbolt's remap, and with it a running engine's commits.
const evidenceBatch = 4096

// consoleEvidence is what the session pages' badges need of a ledger's
// checkpoints: the latest signed checkpoint, checked as `opx ledger
// checkpoint` checks it, and the largest tree a witness cosigned, merged
// as `opx ledger checkpoint --cosigned` merges it. The review commands
// find both by reading the ledger (the cosignatures from its first
// entry); the console, asked again at every new head, reads only the
// entries appended since it last read, and checks a checkpoint once.
// Entries are never rewritten, so what it read stays true while the
// ledger is the same one (its id) and no shorter than what was read;
// otherwise it starts over.
type consoleEvidence struct {
	mu sync.Mutex
	evidenceFold
}

// evidenceFold is what consoleEvidence has read, reset whole.
type evidenceFold struct {
	ledger string // the ledger id read
	latest checkpoint.Latest
	// checked is the latest signed checkpoint checked (nil: none), at
	// checkedSeq; a checkpoint that failed its check is remembered too
	// (checkErr), so that a bad one is not checked at every request.
	checkedSeq uint64
	checked    *signedCheckpoint
	checkErr   error
	// cos folds the ledger.cosigned entries 0..cosNext-1 under the key
	// cosKey (the latest signed checkpoint's); a new key starts it over.
	cos     cosignedFold
	cosKey  string
	cosNext uint64
}

// evidence is what consoleEvidence found at one head.
type evidence struct {
	SignedTree, SignedSeq uint64
	Cosigned              uint64
	Witnesses             []string
}

// at returns the evidence of rv's ledger at head h; what cannot be
// checked is left out (no badge), as consoleSource.checkpoints did.
func (ev *consoleEvidence) at(rv *ledgerReview, h ledger.Head) evidence {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	if h.LedgerID != ev.ledger || h.Seq+1 < ev.cosNext {
		ev.evidenceFold = evidenceFold{ledger: h.LedgerID}
	}
	var out evidence
	var sc signedCheckpoint
	if rv.local != nil {
		seq, pay, ok, err := ev.latest.Find(rv.local, h.Seq)
		if err != nil || !ok {
			return out
		}
		if ev.checked == nil && ev.checkErr == nil || ev.checkedSeq != seq {
			c, err := checkSigned(rv.local, seq, pay)
			ev.checkedSeq, ev.checked, ev.checkErr = seq, &c, err
		}
		if ev.checkErr != nil {
			return out
		}
		sc = *ev.checked
	} else {
		// The engine answers from its own index (checkpoint.Latest) and
		// the proof is checked here.
		var err error
		if _, sc, err = remoteProve(rv.remote, rv.path, 0, nil, nil); err != nil {
			return out
		}
	}
	out.SignedTree, out.SignedSeq = sc.CP.Size, sc.Seq
	if k := sc.Key.String(); k != ev.cosKey {
		ev.cos, ev.cosKey, ev.cosNext = cosignedFold{key: sc.Key}, k, 0
	}
	for ev.cosNext <= h.Seq {
		hi := min(h.Seq, ev.cosNext+evidenceBatch-1)
		var err error
		if rv.local != nil {
			err = rv.local.RangeRaw(ev.cosNext, hi, ev.cos.take)
		} else {
			err = rv.remote.Entries(ev.cosNext, hi, ev.cos.take)
		}
		if err != nil {
			// Read again from where it was, next time.
			ev.cos, ev.cosNext = cosignedFold{key: sc.Key}, 0
			return out
		}
		ev.cosNext = hi + 1
	}
	if cs, err := ev.cos.result(); err == nil {
		out.Cosigned, out.Witnesses = cs.TreeSize, cs.Witnesses
	}
	return out
}
