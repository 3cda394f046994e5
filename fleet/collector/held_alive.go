package collector

import (
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// # Messages held, kept alive
//
// A message the collector holds unacknowledged while it waits for
// something else (an entry in a reorder buffer waiting for an earlier
// one, a part waiting for the other parts, a blob waiting for its
// source's genesis, a message deferred for fairness) would be delivered
// again by JetStream once it has been held for the consumer's ack wait:
// a second copy, dropped as a duplicate, and one more message held until
// the first is settled. So each is reported in progress (which restarts
// JetStream's ack wait) once it has been held for a third of the ack
// wait since it came or was last reported. What is reported stays
// unacknowledged: a crash still has it delivered again.

// keepAlive reports in progress what has been held for every since it
// came or was last reported (the run loop's tick, every a third of the
// ack wait).
func (c *Collector) keepAlive(now time.Time, every time.Duration) {
	c.def.keepAlive(now, every)
	for _, s := range c.sources {
		if len(s.held) == 0 && len(s.parts) == 0 && len(s.blobs) == 0 {
			continue
		}
		for _, h := range s.held {
			h.touched = touchMsgs(h.msgs, h.at, h.touched, now, every)
		}
		for _, a := range s.parts {
			a.touched = touchMsgs(a.msgs, a.at, a.touched, now, every)
		}
		for i := range s.blobs {
			hb := &s.blobs[i]
			hb.touched = touchMsgs(hb.msgs, hb.at, hb.touched, now, every)
		}
	}
}

// touchMsgs reports msgs in progress when every has passed since last
// (or since at, when they were never reported), and returns when they
// were last reported.
func touchMsgs(msgs []jetstream.Msg, at, last, now time.Time, every time.Duration) time.Time {
	if last.IsZero() {
		last = at
	}
	if now.Sub(last) < every {
		return last
	}
	for _, m := range msgs {
		m.InProgress()
	}
	return now
}
