package collector_test

import (
	"errors"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/opx-dev/opx/fleet"
	"github.com/opx-dev/opx/fleet/collector"
)

// fairFloodEnv overrides TestCollector_Flood_OthersWait's flood size.
const fairFloodEnv = "OPX_COLLECTOR_FLOOD"

// TestCollector_Flood_OthersWait measures fairness (issue 31): one source
// whose backlog is already in the stream (a flood of entries), then
// another source's entries, published after it. It counts, in the order
// the collector acknowledged them (Config.Stored), how many flood entries
// were stored before the other source's first entry, or in the same
// batch: a count, not a time, so the machine's load does not change it.
//
// Taking the stream in its order, the other source waited for the whole
// flood (the count was the flood's size, 5,000 here). With the flood's
// messages beyond a batch's share deferred while the batch reads on
// (fair.go), it is at most one batch (2,048 messages), whatever the
// flood's size within the window (131,072 messages, 128 MiB).
func TestCollector_Flood_OthersWait(t *testing.T) {
	flood := 5000
	if v, err := strconv.Atoi(os.Getenv(fairFloodEnv)); err == nil && v > 0 {
		flood = v
	}
	srv := startServer(t)
	p := newPub(t, srv.ClientURL())
	fl := recordedSources(t, 1, flood)[0]
	other := recordedSources(t, 2, 3)[1] // another id
	// Published asynchronously, in order: the flood, then the other's.
	var futs []jetstream.PubAckFuture
	for seq, raw := range fl.raws {
		for _, m := range fleet.EntryMessages(prefix, fl.id, uint64(seq), raw) {
			f, err := p.js.PublishMsgAsync(m)
			for errors.Is(err, jetstream.ErrTooManyStalledMsgs) {
				<-p.js.PublishAsyncComplete()
				f, err = p.js.PublishMsgAsync(m)
			}
			if err != nil {
				t.Fatal(err)
			}
			futs = append(futs, f)
		}
	}
	for _, f := range futs {
		select {
		case <-f.Ok():
		case err := <-f.Err():
			t.Fatal(err)
		}
	}
	for seq, raw := range other.raws {
		for _, m := range fleet.EntryMessages(prefix, other.id, uint64(seq), raw) {
			p.must(m)
		}
	}

	var mu sync.Mutex
	floodHead := uint64(0)
	floodAtOther := int64(-1) // flood entries stored when the other's first was
	otherHead := uint64(0)
	otherDone := false
	hook := func(c *collector.Config) {
		c.Stored = func(id string, head uint64) {
			mu.Lock()
			defer mu.Unlock()
			switch id {
			case fl.id:
				floodHead = head
			case other.id:
				if floodAtOther < 0 {
					floodAtOther = int64(floodHead) + 1
				}
				otherHead = head
				otherDone = head == uint64(len(other.raws)-1)
			}
		}
	}
	start := time.Now()
	startCollector(t, srv.ClientURL(), t.TempDir(), hook)
	waitFor(t, "the other source's entries", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return otherDone
	})
	mu.Lock()
	defer mu.Unlock()
	t.Logf("flood of %d entries in the stream first: %d of them stored before the other source's first entry or with it (other at %d after %v)",
		flood, floodAtOther, otherHead, time.Since(start).Round(time.Millisecond))
	const oneBatch = 2048 // maxBatch
	if floodAtOther > oneBatch {
		t.Errorf("%d flood entries stored before the other source's first (or with it); want at most one batch (%d)", floodAtOther, oneBatch)
	}
}
