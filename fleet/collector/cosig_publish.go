package collector

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/opx-dev/opx/fleet"
)

// # Publishing cosignatures
//
// A cosigned checkpoint is recorded in the collector's ledger, synced,
// then published to the cosignature stream without the run loop waiting
// for the stream's answer: each source has at most one publication in
// flight; the answers are taken at the next publishPending (after each
// commit that cosigned, and every tick). A publication that failed, or
// whose answer has not come when the collector stops, is published again
// (the run loop's next tries, or the next start's: what is recorded and
// not known published is published again, as it was before publishing
// was asynchronous; the stream may then hold it twice).

// cosigFlight is a cosignature published whose answer has not come.
type cosigFlight struct {
	s    *source
	size uint64
	f    jetstream.PubAckFuture
}

// unpublished marks s's cosigned note as not on the stream yet.
func (c *Collector) unpublished(s *source) {
	s.published = false
	if c.toPublish == nil {
		c.toPublish = map[*source]bool{}
	}
	c.toPublish[s] = true
}

// publishPending takes the answers of the cosignatures in flight, then
// publishes each source's recorded cosigned checkpoint that is not on
// the stream yet (unless one of it is in flight).
func (c *Collector) publishPending(ctx context.Context) {
	if c.js == nil {
		return
	}
	// Failures are logged once per call, counted: when the connection
	// goes, every source's publication fails at once (a thousand lines
	// saying the same thing).
	var failed int
	var firstErr string
	fail := func(id string, size uint64, err error) {
		if failed == 0 {
			firstErr = fmt.Sprintf("the cosignature of %s at %d: %v", id, size, err)
		}
		failed++
	}
	defer func() {
		switch {
		case failed == 1:
			c.cfg.Logf("collector: publish %s (again later)", firstErr)
		case failed > 1:
			c.cfg.Logf("collector: publish %d cosignatures failed, the first %s (again later)", failed, firstErr)
		}
	}()
	keep := c.cosigFlights[:0]
	for _, fl := range c.cosigFlights {
		select {
		case <-fl.f.Ok():
			fl.s.publishing = false
			if fl.size == fl.s.cosigned {
				fl.s.published, c.dirty = true, true
				delete(c.toPublish, fl.s)
			}
		case err := <-fl.f.Err():
			fl.s.publishing = false
			fail(fl.s.id, fl.size, err)
		default:
			keep = append(keep, fl)
		}
	}
	clear(c.cosigFlights[len(keep):])
	c.cosigFlights = keep
	for s := range c.toPublish {
		if s.published || s.cosigNote == nil {
			delete(c.toPublish, s)
			continue
		}
		if s.publishing || ctx.Err() != nil {
			continue
		}
		m := fleet.CosigMessage(c.cfg.Prefix, s.id, s.cosigned, s.cosigNote)
		f, err := c.js.PublishMsgAsync(m)
		if err != nil {
			fail(s.id, s.cosigned, err)
			continue
		}
		s.publishing = true
		c.cosigFlights = append(c.cosigFlights, cosigFlight{s: s, size: s.cosigned, f: f})
	}
}

// dropFlights forgets the cosignatures in flight (the connection they
// were published on ends): each is published again.
func (c *Collector) dropFlights() {
	for _, fl := range c.cosigFlights {
		fl.s.publishing = false
	}
	clear(c.cosigFlights)
	c.cosigFlights = nil
}
