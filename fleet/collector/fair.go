package collector

import (
	"context"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// # Fairness
//
// The consumer delivers the stream in its order, so a source whose
// backlog is already in the stream (a flood) comes before every entry
// published after it. A batch handles at most fairShare messages of one
// source; the rest of that source's messages are deferred, in their
// order, in memory and unacknowledged, while the batch reads on: the
// other sources' messages behind the flood are read and handled in the
// same batch (a batch reads on while the consumer says it holds more
// messages). Once the consumer has delivered what it had (the last
// message's pending count is 0) or the deferred messages reach
// deferMaxMsgs or deferMaxBytes, what is left of the batch's room
// (maxBatch) is given to the deferred messages, source after source,
// fairShare at a time; what does not fit waits for the next batch.
//
// So a flood that fits in the window (deferMaxMsgs messages and
// deferMaxBytes, each message counted deferMsgCost beyond its data)
// delays another source's next entry by at most one batch (maxBatch
// messages) of it, whatever its size; beyond the window
// the others wait for what exceeds it, handled maxBatch at a time, as
// before. A message deferred is held as a message held in the reorder
// buffer is: unacknowledged until what it carries is durable, delivered
// again after a crash.

const (
	// fairShare is how many messages of one source a batch handles while
	// others' may be behind them.
	fairShare = 256
	// deferMaxMsgs and deferMaxBytes bound the messages deferred: with the
	// reorder buffers' TotalHeldEntries (a quarter) and two pulls in
	// flight, within the consumer's maxAckPending.
	deferMaxMsgs  = maxAckPending / 2
	deferMaxBytes = 128 << 20
	// deferMsgCost is what a deferred message is counted beyond its
	// data: the client's message, its subject, reply and parsed headers
	// (an estimate).
	deferMsgCost = 512
	// readAheadWait bounds the wait for the next message the consumer
	// says it holds, while reading ahead of a flood.
	readAheadWait = 2 * time.Second
	// batchLinger: a batch that takes what is delivered reads on until
	// this long after the journal's last sync (its commit), so the
	// journal syncs (and the run loop's commits) at most about once per
	// batchLinger whatever the number of sources, each for more entries
	// as the load grows, and an entry that comes after an idle time is
	// committed at once.
	batchLinger = 20 * time.Millisecond
)

// deferred are the messages deferred, per source, in order.
type deferred struct {
	q     map[string][]jetstream.Msg
	order []string // the sources with messages deferred, in turn
	n     int
	bytes int64
	// touched is when the deferred messages were last reported in
	// progress (zero: none deferred when last looked).
	touched time.Time
}

// keepAlive reports every deferred message in progress to JetStream
// (which restarts its ack wait) once they have been deferred for every
// since the last report: a flood deferred longer than the consumer's
// ack wait would otherwise be delivered again, whole, while its first
// copy still waits here. Called from the run loop's tick, with every a
// third of the ack wait.
func (d *deferred) keepAlive(now time.Time, every time.Duration) {
	switch {
	case d.n == 0:
		d.touched = time.Time{}
	case d.touched.IsZero():
		d.touched = now
	case now.Sub(d.touched) >= every:
		for _, q := range d.q {
			for _, m := range q {
				m.InProgress()
			}
		}
		d.touched = now
	}
}

func (d *deferred) full() bool { return d.n >= deferMaxMsgs || d.bytes >= deferMaxBytes }

func (d *deferred) push(id string, m jetstream.Msg) {
	if d.q == nil {
		d.q = map[string][]jetstream.Msg{}
	}
	if len(d.q[id]) == 0 {
		d.order = append(d.order, id)
	}
	d.q[id] = append(d.q[id], m)
	d.n++
	d.bytes += deferMsgCost + int64(len(m.Data()))
}

// nakAll gives the deferred messages back to JetStream (the collector
// stops): delivered again at once to the next run, not after AckWait,
// so a source's later messages do not wait for them in its reorder
// buffer.
func (d *deferred) nakAll() {
	for _, q := range d.q {
		for _, m := range q {
			m.Nak()
		}
	}
	*d = deferred{}
}

// batchFull reports whether b has taken what a batch takes.
func batchFull(b *batch) bool { return len(b.seen) >= maxBatch || b.size >= maxBatchBytes }

// take handles m in b, or defers it: its source has messages deferred
// (their order is kept), or had its share of the batch, or the batch is
// full.
func (c *Collector) take(ctx context.Context, b *batch, m jetstream.Msg) {
	id := sourceOfSubject(c.cfg.Prefix, m.Subject())
	if len(c.def.q[id]) > 0 || b.per[id] >= fairShare || batchFull(b) {
		c.def.push(id, m)
		return
	}
	c.handleCounted(ctx, b, id, m)
}

func (c *Collector) handleCounted(ctx context.Context, b *batch, id string, m jetstream.Msg) {
	if b.per == nil {
		b.per = map[string]int{}
	}
	b.per[id]++
	b.size += len(m.Data())
	c.handle(ctx, b, m)
}

// readBatch fills b from the consumer, starting with first (nil: none),
// then gives the batch's room left to the deferred messages.
func (c *Collector) readBatch(ctx context.Context, b *batch, first jetstream.Msg, msgs <-chan jetstream.Msg) {
	last := first
	if first != nil {
		c.take(ctx, b, first)
	}
read:
	for !c.def.full() && !(batchFull(b) && c.def.n == 0) {
		select {
		case m, ok := <-msgs:
			if !ok {
				break read
			}
			last = m
			c.take(ctx, b, m)
			continue
		default:
		}
		// Nothing delivered yet: read on while the consumer holds more
		// (the batch fills up; a flood's backlog may hide others'
		// messages behind it), and until batchLinger has passed since
		// the journal was last synced.
		wait := readAheadWait
		if last == nil || !morePending(last) {
			if wait = time.Until(c.syncedAt.Add(batchLinger)); wait <= 0 {
				break
			}
		}
		t := time.NewTimer(wait)
		select {
		case m, ok := <-msgs:
			t.Stop()
			if !ok {
				break read
			}
			last = m
			c.take(ctx, b, m)
		case <-ctx.Done():
			t.Stop()
			break read
		case <-t.C:
			break read
		}
	}
	c.drainDeferred(ctx, b)
}

// morePending reports whether the consumer held more messages when it
// delivered m.
func morePending(m jetstream.Msg) bool {
	md, err := m.Metadata()
	return err == nil && md.NumPending > 0
}

// drainDeferred gives the batch's room left to the deferred messages,
// in rounds: each source with messages deferred takes up to fairShare of
// them in turn, oldest first.
func (c *Collector) drainDeferred(ctx context.Context, b *batch) {
	for c.def.n > 0 && !batchFull(b) {
		order := c.def.order
		c.def.order = nil
		for i, id := range order {
			q := c.def.q[id]
			k := 0
			for k < len(q) && k < fairShare && !batchFull(b) {
				m := q[k]
				q[k] = nil
				k++
				c.def.n--
				c.def.bytes -= deferMsgCost + int64(len(m.Data()))
				c.handleCounted(ctx, b, id, m)
			}
			if q = q[k:]; len(q) > 0 {
				c.def.q[id] = q
				c.def.order = append(c.def.order, id)
			} else {
				delete(c.def.q, id)
			}
			if batchFull(b) {
				c.def.order = append(c.def.order, order[i+1:]...)
				return
			}
		}
	}
}
