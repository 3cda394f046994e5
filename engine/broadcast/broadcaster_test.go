package broadcast_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opx-dev/opx/engine/broadcast"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/ledgertest"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
)

// broadcastLedger is a real ledger for a broadcaster; flush is its group
// commit interval.
func broadcastLedger(t *testing.T, flush time.Duration) *ledger.Ledger {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ledger.db")
	l, err := ledger.Create(path, ledger.Options{FlushInterval: flush})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := l.Close(); err != nil {
			t.Error(err)
		}
		ledgertest.MustVerify(t, path)
	})
	return l
}

func noteRecord(i int) ledger.Record {
	return ledger.Record{Type: "ledger.note", Data: map[string]any{"author": "t", "text": fmt.Sprint("n", i)}}
}

func TestBroadcaster_FanOut(t *testing.T) {
	b := broadcast.New(broadcastLedger(t, 0))
	s1, s2, other := b.Subscribe("s"), b.Subscribe("s"), b.Subscribe("t")
	b.Publish(&opxv1.PipelineEvent{SessionId: "s", Type: "token"})
	for i, s := range []*broadcast.Subscription{s1, s2} {
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
	b := broadcast.New(broadcastLedger(t, 0))
	slow, fast := b.Subscribe("s"), b.Subscribe("s")
	// The fast one reads each event before the next is published.
	got := make(chan struct{})
	go func() {
		for range fast.C {
			got <- struct{}{}
		}
	}()
	for i := 0; i < 5000; i++ {
		b.Publish(&opxv1.PipelineEvent{SessionId: "s", Type: "tool_call", Data: []byte(`{}`)})
		<-got
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

// TestBroadcaster_SlowReaderGetsEveryToken: a client that reads slower
// than the model streams is not cut off for a long answer: the tokens it
// has not read yet are joined, per message, and arrive whole and in order
// with the events between them (a CI failure: `opx send` on a busy
// machine was cut off in the middle of a model's answer).
func TestBroadcaster_SlowReaderGetsEveryToken(t *testing.T) {
	b := broadcast.New(broadcastLedger(t, 0))
	slow := b.Subscribe("s")
	var want strings.Builder
	token := func(msg, text string) {
		data, _ := json.Marshal(map[string]string{"text": text})
		b.Publish(&opxv1.PipelineEvent{SessionId: "s", MessageId: msg, Type: "token", Data: data})
	}
	for i := range 20000 {
		text := fmt.Sprintf("t%d \"é\n", i)
		want.WriteString(text)
		token("m1", text)
		if i == 10000 {
			b.Publish(&opxv1.PipelineEvent{SessionId: "s", MessageId: "m1", Type: "tool_call", Data: []byte(`{"n":1}`)})
			want.WriteString("|tool_call|")
		}
	}
	token("m2", "other message")
	want.WriteString("|m2:other message")
	b.Publish(&opxv1.PipelineEvent{SessionId: "s", MessageId: "m2", Type: "response_complete"})
	var got strings.Builder
	n := 0
	for ev := range slow.C {
		n++
		switch {
		case ev.Type == "token":
			var d struct{ Text string }
			if err := json.Unmarshal(ev.Data, &d); err != nil {
				t.Fatal(err)
			}
			if ev.MessageId == "m2" {
				got.WriteString("|m2:")
			}
			got.WriteString(d.Text)
		case ev.Type == "response_complete":
			slow.Close()
		default:
			got.WriteString("|" + ev.Type + "|")
		}
	}
	if got.String() != want.String() {
		t.Fatalf("the tokens arrived as %d bytes, want %d (and equal)", got.Len(), want.Len())
	}
	if n > 20000 {
		t.Errorf("%d events: nothing was joined", n)
	}
}

// TestBroadcaster_TokensBounded: what waits for a client that reads
// nothing is bounded in bytes too: past it the client is cut off.
func TestBroadcaster_TokensBounded(t *testing.T) {
	b := broadcast.New(broadcastLedger(t, 0))
	stuck := b.Subscribe("s")
	data, _ := json.Marshal(map[string]string{"text": strings.Repeat("x", 64<<10)})
	for range 1000 { // 64 MiB
		b.Publish(&opxv1.PipelineEvent{SessionId: "s", MessageId: "m", Type: "token", Data: data})
	}
	if n := b.Subscribers("s"); n != 0 {
		t.Fatalf("a client that read nothing of 64 MiB of tokens is still subscribed")
	}
	for range stuck.C {
	}
}

// TestBroadcaster_HoldsUntilDurable: an event about an entry appended
// Async, and any event published after it (a token names no entry but
// its session and message), reaches no subscriber until the entry is
// durable; then all arrive in publication order. The group commit is held
// back (an hour), so only the Sync commits.
func TestBroadcaster_HoldsUntilDurable(t *testing.T) {
	l := broadcastLedger(t, time.Hour)
	b := broadcast.New(l)
	defer b.Close()
	sub := b.Subscribe("s")
	a, err := l.Append(context.Background(), ledger.Async, noteRecord(1))
	if err != nil {
		t.Fatal(err)
	}
	b.Publish(&opxv1.PipelineEvent{SessionId: "s", Type: "message", Seq: a[0].Seq})
	b.Publish(&opxv1.PipelineEvent{SessionId: "s", Type: "token"})
	select {
	case ev := <-sub.C:
		t.Fatalf("got %s (seq %d) before entry %d was durable", ev.Type, ev.Seq, a[0].Seq)
	default:
	}
	if err := l.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"message", "token"} {
		ev := <-sub.C
		if ev.Type != want {
			t.Fatalf("got %s, want %s (publication order)", ev.Type, want)
		}
		if w, _ := l.Watermark(); w.Durable < a[0].Seq {
			t.Fatalf("%s delivered with durable %d < %d", ev.Type, w.Durable, a[0].Seq)
		}
	}
	// Once durable, an event goes out at once.
	b.Publish(&opxv1.PipelineEvent{SessionId: "s", Type: "late", Seq: a[0].Seq})
	if ev := <-sub.C; ev.Type != "late" {
		t.Fatalf("got %v", ev)
	}
}

// TestBroadcaster_NeverAheadOfDurable: appenders record Async and publish
// each entry's seq, as the engine does, while the group commit runs on its
// own; a subscriber never receives a seq above the durable watermark, and
// receives every event.
func TestBroadcaster_NeverAheadOfDurable(t *testing.T) {
	l := broadcastLedger(t, time.Millisecond)
	b := broadcast.New(l)
	defer b.Close()
	sub := b.Subscribe("s")
	const writers, each = 4, 200
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				a, err := l.Append(context.Background(), ledger.Async, noteRecord(i))
				if err != nil {
					t.Error(err)
					return
				}
				b.Publish(&opxv1.PipelineEvent{SessionId: "s", Type: "message", Seq: a[0].Seq})
			}
		}()
	}
	ahead := 0
	for n := 0; n < writers*each; n++ {
		ev := <-sub.C
		if w, _ := l.Watermark(); ev.Seq > w.Durable {
			if ahead++; ahead == 1 {
				t.Errorf("received seq %d with durable %d", ev.Seq, w.Durable)
			}
		}
	}
	wg.Wait()
	if ahead > 0 {
		t.Errorf("%d of %d events arrived before their entry was durable", ahead, writers*each)
	}
}
