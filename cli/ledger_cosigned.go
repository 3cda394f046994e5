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
	f := cosignedFold{key: key}
	if rv.local != nil {
		h, err := rv.local.Head()
		if err != nil {
			return nil, err
		}
		if err := rv.local.RangeRaw(0, h.Seq, f.take); err != nil {
			return nil, err
		}
	} else {
		h, err := rv.remote.Head()
		if err != nil {
			return nil, err
		}
		if err := rv.remote.Entries(0, h.Seq, f.take); err != nil {
			return nil, err
		}
	}
	return f.result()
}

// cosignedFold is latestCosigned one entry at a time: fed the entries in
// seq order (all of them, or those appended since it was last fed), it
// holds the largest cosigned tree signed by key and its cosignatures.
// Its zero value with key set has read nothing.
type cosignedFold struct {
	key   tlog.Verifier
	best  *cosignedCheckpoint
	body  string
	lines []string
}

// take reads one stored entry: a ledger.cosigned of this ledger's key
// counts, anything else is passed over (verify reports what does not
// parse).
func (f *cosignedFold) take(seq uint64, raw []byte) error {
	if !bytes.HasSuffix(raw, cosignedSuffix) {
		return nil
	}
	e, err := ledger.ParseEntry(raw)
	if err != nil {
		return nil
	}
	p, err := event.Decode(e)
	if err != nil {
		return nil
	}
	c := p.(*event.Cosigned)
	if _, err := tlog.Open([]byte(c.Note), f.key); err != nil {
		return nil // not this ledger's signature on it
	}
	b, sigs, ok := strings.Cut(c.Note, "\n\n")
	if !ok {
		return nil
	}
	switch {
	case f.best == nil || c.TreeSize > f.best.TreeSize:
		f.best = &cosignedCheckpoint{TreeSize: c.TreeSize}
		f.body, f.lines = b, nil
	case c.TreeSize < f.best.TreeSize || b != f.body:
		return nil
	}
	for _, l := range strings.SplitAfter(sigs, "\n") {
		if l != "" && !contains(f.lines, l) {
			f.lines = append(f.lines, l)
		}
	}
	// A copy: a result handed out earlier is never changed under its
	// holder.
	w := append(append([]string(nil), f.best.Witnesses...), fmt.Sprintf("%s+%s", c.Witness, c.KeyHash))
	f.best = &cosignedCheckpoint{TreeSize: f.best.TreeSize, Witnesses: w, Seqs: append(append([]uint64(nil), f.best.Seqs...), seq)}
	return nil
}

// result is the largest cosigned checkpoint read so far, its
// cosignatures merged into one note; errNoCosigned when there is none.
func (f *cosignedFold) result() (*cosignedCheckpoint, error) {
	if f.best == nil {
		return nil, errNoCosigned
	}
	out := *f.best
	out.Note = f.body + "\n\n" + strings.Join(f.lines, "")
	return &out, nil
}

var cosignedSuffix = []byte(`"type":"` + event.TypeCosigned + `"}`)

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
