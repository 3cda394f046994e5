package engine

import (
	"sync"

	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
)

// subscriberBuffer is how many events a slow client may fall behind before
// it is cut off; the ledger keeps everything, so a client that was cut off
// can read the rest from it.
const subscriberBuffer = 1024

// Broadcaster fans pipeline events out to every client subscribed to a
// session. Publishing never blocks: a subscriber whose buffer is full is
// dropped (its channel closed) rather than stall the engine.
type Broadcaster struct {
	mu   sync.Mutex
	subs map[string]map[*Subscription]struct{}
}

// Subscription receives one session's events on C until Close, or until it
// fell too far behind (C is closed).
type Subscription struct {
	C       <-chan *opxv1.PipelineEvent
	c       chan *opxv1.PipelineEvent
	session string
	b       *Broadcaster
	once    sync.Once
}

// NewBroadcaster returns a broadcaster with no subscribers.
func NewBroadcaster() *Broadcaster {
	return &Broadcaster{subs: map[string]map[*Subscription]struct{}{}}
}

// Subscribe starts receiving a session's events.
func (b *Broadcaster) Subscribe(session string) *Subscription {
	c := make(chan *opxv1.PipelineEvent, subscriberBuffer)
	s := &Subscription{C: c, c: c, session: session, b: b}
	b.mu.Lock()
	defer b.mu.Unlock()
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
		close(s.c)
	})
}

// Publish sends ev to every subscriber of its session.
func (b *Broadcaster) Publish(ev *opxv1.PipelineEvent) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for s := range b.subs[ev.SessionId] {
		select {
		case s.c <- ev:
		default:
			s.closeLocked()
		}
	}
}

// Subscribers returns how many clients follow a session.
func (b *Broadcaster) Subscribers(session string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.subs[session])
}
