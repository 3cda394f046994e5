package engine_test

import (
	"testing"

	"github.com/opx-dev/opx/engine"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
)

func TestBroadcaster_FanOut(t *testing.T) {
	b := engine.NewBroadcaster()
	s1, s2, other := b.Subscribe("s"), b.Subscribe("s"), b.Subscribe("t")
	b.Publish(&opxv1.PipelineEvent{SessionId: "s", Type: "token"})
	for i, s := range []*engine.Subscription{s1, s2} {
		if ev := <-s.C; ev.Type != "token" {
			t.Errorf("subscriber %d got %v", i, ev)
		}
	}
	select {
	case ev := <-other.C:
		t.Errorf("a subscriber of another session got %v", ev)
	default:
	}
	s1.Close()
	if _, ok := <-s1.C; ok {
		t.Error("closed subscription still open")
	}
	if n := b.Subscribers("s"); n != 1 {
		t.Errorf("%d subscribers after close, want 1", n)
	}
	s1.Close() // twice is harmless
}

// TestBroadcaster_SlowSubscriberDropped: a client that stops reading is cut
// off instead of stalling the engine.
func TestBroadcaster_SlowSubscriberDropped(t *testing.T) {
	b := engine.NewBroadcaster()
	slow, fast := b.Subscribe("s"), b.Subscribe("s")
	for i := 0; i < 5000; i++ {
		b.Publish(&opxv1.PipelineEvent{SessionId: "s", Type: "token"})
		select {
		case <-fast.C:
		default:
		}
	}
	n := 0
	for range slow.C {
		n++
	}
	if n == 0 || n >= 5000 {
		t.Errorf("slow subscriber got %d events before being dropped", n)
	}
	if b.Subscribers("s") != 1 {
		t.Errorf("the slow subscriber is still registered")
	}
}
