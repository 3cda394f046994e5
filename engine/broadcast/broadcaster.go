package broadcast

import (
	"encoding/json"
	"sync"

	"github.com/opx-dev/opx/ledger"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
)

// What a slow client may fall behind before it is cut off: the ledger
// keeps everything, so a client that was cut off can read the rest from
// it. Tokens a client has not read yet are joined into one event per
// message (text deltas lose nothing joined), so a model's long answer
// does not cut off a client that reads a little slower than it streams.
const (
	// subscriberBuffer bounds the events waiting for one client.
	subscriberBuffer = 1024
	// subscriberBytes bounds their data.
	subscriberBytes = 8 << 20
	// subscriberChan is the channel between a subscription's queue and
	// its reader.
	subscriberChan = 16
)

// TypeToken is the pipeline event of a model's text delta: a client's
// unread ones are joined into one.
const TypeToken = "token"

// Broadcaster fans pipeline events out to every client subscribed to a
// session. It is the one place that decides when a client may hear of an
// event: only once every entry appended before it was published is
// durable (the ledger's watermark), so no seq, session id or message id
// reaches a client before its entry could survive a crash. Events wait in
// publication order and are released as the group commit makes them
// durable; an event whose entries are durable already goes out at once.
//
// Publishing never blocks: a subscriber whose buffer is full is dropped
// (its channel closed) rather than stall the engine.
type Broadcaster struct {
	l *ledger.Ledger

	mu      sync.Mutex
	subs    map[string]map[*Subscription]struct{}
	pending []heldEvent // in publication order
	waiting bool        // a release goroutine waits on the watermark
	quit    chan struct{}
	closed  bool
	// broken is set once the ledger failed: nothing more becomes
	// durable, so every subscription is closed and none is taken.
	broken bool
}

// heldEvent is an event waiting until the ledger is durable up to after.
type heldEvent struct {
	ev    *opxv1.PipelineEvent
	after uint64
}

// Subscription receives one session's events on C until Close, or until it
// fell too far behind (C is closed).
type Subscription struct {
	C       <-chan *opxv1.PipelineEvent
	c       chan *opxv1.PipelineEvent
	session string
	b       *Broadcaster
	once    sync.Once

	// The events not yet handed to C, in order, and their data's bytes
	// (guarded by b.mu); pump moves them to C.
	q      []queued
	qBytes int
	wake   chan struct{} // cap 1: q has events
	done   chan struct{} // closed by closeLocked
}

// New returns a broadcaster with no subscribers that publishes
// what l makes durable.
func New(l *ledger.Ledger) *Broadcaster {
	return &Broadcaster{l: l, subs: map[string]map[*Subscription]struct{}{}, quit: make(chan struct{})}
}

// Subscribe starts receiving a session's events. After the ledger failed,
// the subscription's C is closed at once.
func (b *Broadcaster) Subscribe(session string) *Subscription {
	c := make(chan *opxv1.PipelineEvent, subscriberChan)
	s := &Subscription{C: c, c: c, session: session, b: b, wake: make(chan struct{}, 1), done: make(chan struct{})}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.broken {
		s.once.Do(func() { close(s.done); close(s.c) })
		return s
	}
	go s.pump()
	if b.subs[session] == nil {
		b.subs[session] = map[*Subscription]struct{}{}
	}
	b.subs[session][s] = struct{}{}
	return s
}

// Close stops the subscription and closes C.
func (s *Subscription) Close() {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	s.closeLocked()
}

func (s *Subscription) closeLocked() {
	s.once.Do(func() {
		delete(s.b.subs[s.session], s)
		if len(s.b.subs[s.session]) == 0 {
			delete(s.b.subs, s.session)
		}
		s.q, s.qBytes = nil, 0
		close(s.done) // pump closes C
	})
}

// pump hands the queued events to C, in order, until the subscription is
// closed; then it closes C (what C holds is still read).
func (s *Subscription) pump() {
	defer close(s.c)
	for {
		select {
		case <-s.wake:
		case <-s.done:
			return
		}
		s.b.mu.Lock()
		batch := s.q
		s.q, s.qBytes = nil, 0
		s.b.mu.Unlock()
		for _, it := range batch {
			ev := it.event()
			select {
			case s.c <- ev:
			case <-s.done:
				return
			}
		}
	}
}

// enqueueLocked queues ev for the subscription, joining a token to the
// token queued last for the same message; a subscription over its bounds
// is cut off. b.mu is held.
func (s *Subscription) enqueueLocked(ev *opxv1.PipelineEvent) {
	if n := len(s.q); n > 0 && ev.Type == TypeToken {
		if last := &s.q[n-1]; last.ev.Type == TypeToken && last.ev.MessageId == ev.MessageId && last.join(ev) {
			s.qBytes += len(ev.Data)
			if s.qBytes > subscriberBytes {
				s.closeLocked()
			}
			return
		}
	}
	if len(s.q) >= subscriberBuffer || s.qBytes+len(ev.Data) > subscriberBytes {
		s.closeLocked()
		return
	}
	s.q = append(s.q, queued{ev: ev})
	s.qBytes += len(ev.Data)
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// queued is an event waiting for a subscriber; a token event that later
// tokens were joined to holds the joined text (encoded once, by pump: the
// events published are shared by every subscriber, and joining costs
// only the new token's bytes).
type queued struct {
	ev     *opxv1.PipelineEvent
	text   []byte // joined text, when joined
	joined bool
}

// join appends token b's text to q's; false if either is not a token's
// {"text": ...}.
func (q *queued) join(b *opxv1.PipelineEvent) bool {
	var tb tokenData
	if json.Unmarshal(b.Data, &tb) != nil {
		return false
	}
	if !q.joined {
		var ta tokenData
		if json.Unmarshal(q.ev.Data, &ta) != nil {
			return false
		}
		q.text, q.joined = []byte(ta.Text), true
	}
	q.text = append(q.text, tb.Text...)
	return true
}

// event is the event to hand on.
func (q queued) event() *opxv1.PipelineEvent {
	if !q.joined {
		return q.ev
	}
	data, _ := json.Marshal(tokenData{Text: string(q.text)})
	return &opxv1.PipelineEvent{Type: TypeToken, SessionId: q.ev.SessionId, MessageId: q.ev.MessageId, Data: data, Timestamp: q.ev.Timestamp}
}

type tokenData struct {
	Text string `json:"text"`
}

// Publish sends ev to every subscriber of its session once every entry
// appended so far (and so ev.Seq, and the entries that named its session
// and message) is durable. An event published after the ledger failed is
// never sent: nothing after the failure is durable.
func (b *Broadcaster) Publish(ev *opxv1.PipelineEvent) {
	w, err := b.l.Watermark()
	b.mu.Lock()
	defer b.mu.Unlock()
	if err != nil {
		b.breakLocked()
		return
	}
	after := max(ev.Seq, w.Queued)
	if b.closed {
		return
	}
	if len(b.pending) == 0 && after <= w.Durable {
		b.sendLocked(ev)
		return
	}
	b.pending = append(b.pending, heldEvent{ev: ev, after: after})
	if !b.waiting {
		b.waiting = true
		go b.release()
	}
}

// release sends held events, in order, as the watermark passes them, and
// ends when none is left.
func (b *Broadcaster) release() {
	for {
		w, err := b.l.Watermark()
		b.mu.Lock()
		n := 0
		for ; n < len(b.pending) && b.pending[n].after <= w.Durable; n++ {
			b.sendLocked(b.pending[n].ev)
			b.pending[n] = heldEvent{}
		}
		b.pending = b.pending[n:]
		if err != nil {
			b.breakLocked()
		}
		if len(b.pending) == 0 || err != nil || b.closed {
			b.pending, b.waiting = nil, false
			b.mu.Unlock()
			return
		}
		b.mu.Unlock()
		select {
		case <-w.Advanced:
		case <-b.quit:
		}
	}
}

func (b *Broadcaster) sendLocked(ev *opxv1.PipelineEvent) {
	for s := range b.subs[ev.SessionId] {
		s.enqueueLocked(ev)
	}
}

// Close drops the events still held (their entries never became durable)
// and publishes nothing more.
func (b *Broadcaster) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.closed {
		b.closed = true
		close(b.quit)
	}
}

// breakLocked closes every subscription and drops what waits: the ledger
// failed, so no held event will ever be durable and a client waiting for
// one would wait for ever. b.mu is held.
func (b *Broadcaster) breakLocked() {
	b.broken = true
	b.pending = nil
	for _, subs := range b.subs {
		for s := range subs {
			s.closeLocked()
		}
	}
}

// Broken reports whether the ledger failed under the broadcaster (its
// subscriptions were closed for that, not for falling behind).
func (b *Broadcaster) Broken() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.broken
}

// Subscribers returns how many clients follow a session.
func (b *Broadcaster) Subscribers(session string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.subs[session])
}
