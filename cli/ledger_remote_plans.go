package cli

import (
	"errors"
	"time"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// settleRunningPlans wraps a strict verify's CheckEnd for a verify
// through the engine. A rollback plan with no outcome at the head verify
// read to may be one the engine is carrying out at that moment (offline,
// with no engine, it cannot be). Such a plan is settled by its outcome in
// the entries after that head, taken only while they chain onto it: a
// verify of the file at any later head would see that outcome too. It
// waits up to planWait for outcomes still to come; a plan still open
// then is reported as offline.
func settleRunningPlans(src ledger.Source, head ledger.Head, end func() []*ledger.IntegrityError) func() []*ledger.IntegrityError {
	return func() []*ledger.IntegrityError {
		fs := end()
		open := map[uint64]bool{}
		for _, f := range fs {
			if f.Kind == ledger.KindCausality {
				open[f.Seq] = true
			}
		}
		closed := map[uint64]bool{}
		prev, next := head.Hash, head.Seq+1
		deadline := time.Now().Add(planWait)
		for len(open) > len(closed) {
			err := src.Entries(next, ^uint64(0), func(seq uint64, raw []byte) error {
				e, err := ledger.ParseStored(seq, raw)
				if err != nil || seq != next || e.Prev != prev {
					return errNotChained
				}
				prev, next = e.Hash(), seq+1
				if e.Type == event.TypeRollback {
					if p, err := event.Decode(e); err == nil && open[p.(*event.Rollback).Plan] {
						closed[p.(*event.Rollback).Plan] = true
					}
				}
				return nil
			})
			if err != nil || time.Now().After(deadline) || len(open) == len(closed) {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		out := fs[:0]
		for _, f := range fs {
			if f.Kind == ledger.KindCausality && closed[f.Seq] {
				continue
			}
			out = append(out, f)
		}
		return out
	}
}

// planWait bounds how long verify waits for the outcome of a rollback the
// engine is carrying out.
var planWait = 10 * time.Second

var errNotChained = errors.New("entries after the head do not chain onto it")
