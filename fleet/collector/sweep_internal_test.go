package collector

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestTick_SweepsSourcesEverySweepEvery: the run loop's tick (every
// statusEvery) goes over every source only once sweepEvery passed since
// it last did (with 10,000 sources, going over them four times a second
// cost more than the entries): a source stalled long ago is alerted at
// the first tick after that, not before.
func TestTick_SweepsSourcesEverySweepEvery(t *testing.T) {
	c, err := New(Config{Store: t.TempDir(), NoSync: true, StallAfter: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s := c.source(strings.Repeat("a", 32))
	s.has, s.lastSeen = true, time.Now().Add(-time.Hour)

	c.sweptAt = time.Now()
	c.tick(context.Background())
	if s.stalled {
		t.Fatal("the sources were gone over again within sweepEvery of the last time")
	}
	c.sweptAt = time.Now().Add(-sweepEvery)
	c.tick(context.Background())
	if !s.stalled {
		t.Fatal("a source silent for an hour (StallAfter 1m) not stalled once sweepEvery passed")
	}
	if time.Since(c.sweptAt) > time.Minute {
		t.Fatal("sweptAt not moved by the sweep")
	}
}

// TestSweepDue_WithinTheAckWait: the sweep also keeps held messages
// alive, so it comes at least six times per ack wait (a short one: the
// crash drill's 2 s).
func TestSweepDue_WithinTheAckWait(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		ackWait time.Duration
		period  time.Duration
	}{{0, sweepEvery}, {2 * time.Second, 2 * time.Second / 6}, {time.Minute, sweepEvery}} {
		c := &Collector{cfg: Config{AckWait: tc.ackWait}, sweptAt: now.Add(-tc.period + time.Millisecond)}
		if c.sweepDue(now) {
			t.Errorf("ack wait %v: due %v after the last sweep, want %v", tc.ackWait, tc.period-time.Millisecond, tc.period)
		}
		c.sweptAt = now.Add(-tc.period)
		if !c.sweepDue(now) {
			t.Errorf("ack wait %v: not due %v after the last sweep", tc.ackWait, tc.period)
		}
	}
}

// TestWitnessBook_PendingCounted: the book counts the origins with a
// checkpoint cosigned over add-checkpoint that their mirror has not been
// compared with (the sweep skips every source's origins while there is
// none): set, replaced, cleared.
func TestWitnessBook_PendingCounted(t *testing.T) {
	var b witnessBook
	if b.anyPending() {
		t.Fatal("an empty book has a pending checkpoint")
	}
	l1, l2 := b.get("one", true), b.get("two", true)
	l1.mu.Lock()
	b.setPending(l1, pendingWitnessed{size: 5})
	b.setPending(l1, pendingWitnessed{size: 7}) // replaced: still one
	l1.mu.Unlock()
	l2.mu.Lock()
	b.setPending(l2, pendingWitnessed{size: 3})
	l2.mu.Unlock()
	if n := b.pending.Load(); n != 2 {
		t.Fatalf("pending = %d, want 2", n)
	}
	l1.mu.Lock()
	b.setPending(l1, pendingWitnessed{})
	b.setPending(l1, pendingWitnessed{}) // cleared twice: counted once
	l1.mu.Unlock()
	if n := b.pending.Load(); n != 1 || !b.anyPending() {
		t.Fatalf("pending = %d, want 1", n)
	}
	l2.mu.Lock()
	b.setPending(l2, pendingWitnessed{})
	l2.mu.Unlock()
	if b.anyPending() {
		t.Fatal("pending left after every checkpoint was cleared")
	}
	// A mirror bound with a cosigned checkpoint recorded (a restart)
	// makes it pending.
	l3 := b.get("three", true)
	l3.size = 9
	b.bind("three", "id", &mirrorTrees{})
	if !b.anyPending() || l3.pending.size != 9 {
		t.Fatalf("bind after a restart: pending %d (size %d), want the recorded checkpoint", b.pending.Load(), l3.pending.size)
	}
}
