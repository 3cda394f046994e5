package cli

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/tlog"
)

// errNoCosigned is returned by latestCosigned for a ledger that records no
// cosigned checkpoint.
var errNoCosigned = errors.New("the ledger records no cosigned checkpoint (ledger.cosigned): configure ledger.witnesses, or the fleet's collector, and wait for a checkpoint")

// cosignedCheckpoint is the ledger's largest cosigned checkpoint with
// every cosignature of it the ledger records merged into one note.
type cosignedCheckpoint struct {
	Note      string
	TreeSize  uint64
	Witnesses []string // name+key hash of each cosigner, in the order recorded
	Seqs      []uint64 // the ledger.cosigned entries merged
}

// latestCosigned reads every ledger.cosigned entry and merges the
// signature lines of those of the largest tree size whose body is the
// same checkpoint, signed by key (the ledger's). Memory: one note per
// cosigner of that size, each at most event.MaxCosignedNote.
func latestCosigned(rv *ledgerReview, key tlog.Verifier) (*cosignedCheckpoint, error) {
	suffix := []byte(`"type":"` + event.TypeCosigned + `"}`)
	var best *cosignedCheckpoint
	var body string
	var lines []string
	take := func(seq uint64, raw []byte) error {
		if !bytes.HasSuffix(raw, suffix) {
			return nil
		}
		e, err := ledger.ParseEntry(raw)
		if err != nil {
			return nil // verify reports what does not parse
		}
		p, err := event.Decode(e)
		if err != nil {
			return nil
		}
		c := p.(*event.Cosigned)
		if _, err := tlog.Open([]byte(c.Note), key); err != nil {
			return nil // not this ledger's signature on it
		}
		b, sigs, ok := strings.Cut(c.Note, "\n\n")
		if !ok {
			return nil
		}
		switch {
		case best == nil || c.TreeSize > best.TreeSize:
			best = &cosignedCheckpoint{TreeSize: c.TreeSize}
			body, lines = b, nil
		case c.TreeSize < best.TreeSize || b != body:
			return nil
		}
		for _, l := range strings.SplitAfter(sigs, "\n") {
			if l != "" && !contains(lines, l) {
				lines = append(lines, l)
			}
		}
		best.Witnesses = append(best.Witnesses, fmt.Sprintf("%s+%s", c.Witness, c.KeyHash))
		best.Seqs = append(best.Seqs, seq)
		return nil
	}
	if rv.local != nil {
		h, err := rv.local.Head()
		if err != nil {
			return nil, err
		}
		if err := rv.local.RangeRaw(0, h.Seq, take); err != nil {
			return nil, err
		}
	} else {
		h, err := rv.remote.Head()
		if err != nil {
			return nil, err
		}
		if err := rv.remote.Entries(0, h.Seq, take); err != nil {
			return nil, err
		}
	}
	if best == nil {
		return nil, errNoCosigned
	}
	best.Note = body + "\n\n" + strings.Join(lines, "")
	return best, nil
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
