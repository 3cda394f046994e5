package checkpoint

import (
	"context"
	"time"
)

// DefaultOnDemandEvery is the least time between two checkpoints recorded
// on demand.
const DefaultOnDemandEvery = time.Second

// OnDemand records a signed checkpoint when a client needs one that
// covers an entry the latest does not (`opx ledger prove` of the newest
// entries, which would otherwise wait for the periodic checkpoint).
//
// # Rate bound
//
// Signing grows the ledger by one entry, and any client may ask: so
// OnDemand records at most one checkpoint every Every, however many
// clients ask and whatever they ask for (proving a checkpoint entry itself
// always needs a newer one). Callers are served one at a time; each first
// asks whether a checkpoint recorded meanwhile covers what it needs, so
// callers that arrive while one is waited for or recorded share it and
// sign nothing more. A caller waits at most Every for its turn to sign,
// plus the time of the callers before it; it leaves when its context
// ends.
type OnDemand struct {
	record func(context.Context) error
	every  time.Duration

	turn chan struct{} // holds one token: the caller whose turn it is
	last time.Time     // when the last checkpoint on demand was recorded; under turn
}

// NewOnDemand returns an OnDemand that records a checkpoint with record
// (which returns once the checkpoint is durable and its note published),
// at most one every every (DefaultOnDemandEvery when not positive).
func NewOnDemand(record func(context.Context) error, every time.Duration) *OnDemand {
	if every <= 0 {
		every = DefaultOnDemandEvery
	}
	return &OnDemand{record: record, every: every, turn: make(chan struct{}, 1)}
}

// Cover makes sure a signed checkpoint covers what the caller needs:
// covered says whether the latest does (it is asked again after each
// checkpoint). When it does not, Cover records one, no sooner than Every
// after the last it recorded, and returns covered's answer after it.
// Cover returns ctx's error when ctx ends first.
func (d *OnDemand) Cover(ctx context.Context, covered func() (bool, error)) (bool, error) {
	select {
	case d.turn <- struct{}{}:
	case <-ctx.Done():
		return false, ctx.Err()
	}
	defer func() { <-d.turn }()
	if err := ctx.Err(); err != nil {
		return false, err // both were ready, and select chose the turn
	}
	if ok, err := covered(); ok || err != nil {
		return ok, err
	}
	if wait := time.Until(d.last.Add(d.every)); wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
	err := d.record(ctx)
	d.last = time.Now()
	if err != nil {
		return false, err
	}
	return covered()
}
