package collector_test

import (
	"context"
	"testing"

	"github.com/opx-dev/opx/fleet"
)

// TestCollector_LostDelivery_Tail: the last messages of a source were
// delivered on the collector's consumer and never acknowledged (a
// collector killed with them in hand, or a delivery lost when the
// consumer's leader died in a cluster) and nothing comes after them:
// no later entry waits for them and the source's hello is older, so no
// resend is asked. JetStream delivers them again after the consumer's
// ack wait, and the default must be short enough for that to be
// recovery rather than an outage: with the default of 5 minutes this
// test times out (TestE2E_FleetCluster did, once, after the stream
// leader was killed).
func TestCollector_LostDelivery_Tail(t *testing.T) {
	t.Parallel() // 30 s of waiting: beside the package's other work
	srv := startServer(t)
	store := t.TempDir()
	p := newPub(t, srv.ClientURL())
	s := newSource(t, t.TempDir())
	s.notes(t, 6, true)
	p.hello(s.Ledger, "a")
	p.ship(s.Ledger, 0, s.head(t).Seq)
	r := startCollector(t, srv.ClientURL(), store)
	r.waitHead(t, s.ID(), s.head(t).Seq)
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	from := s.head(t).Seq + 1
	s.notes(t, 3, true)
	p.ship(s.Ledger, from, s.head(t).Seq)

	// The collector's durable consumer delivers the new messages to
	// someone who never acknowledges them (the collector, just before
	// it was killed). Some may have gone already to the pull request
	// the stopped collector left waiting on the server (what happens on
	// a real stop too): delivered, unacknowledged.
	ctx := context.Background()
	cons, err := p.js.Consumer(ctx, fleet.LedgerStream(prefix), "opx-collector")
	if err != nil {
		t.Fatal(err)
	}
	// The stream stores a message when its publish returns; the
	// consumer's counts follow it. Wait until the consumer holds the 3
	// new messages (pending, or delivered to the stopped collector's
	// pull), then take every pending one without acknowledging it, until
	// none is pending (a message may reach the consumer between a count
	// and a fetch: CI's busy 2-core machine showed it).
	waitFor(t, "the consumer to hold the 3 new messages", func() bool {
		info, err := cons.Info(ctx)
		return err == nil && int(info.NumPending)+info.NumAckPending >= 3
	})
	waitFor(t, "no message pending on the consumer", func() bool {
		info, err := cons.Info(ctx)
		if err != nil {
			return false
		}
		if n := int(info.NumPending); n > 0 {
			batch, err := cons.FetchNoWait(n)
			if err != nil {
				return false
			}
			for range batch.Messages() {
			}
			return false // counted again on the next look
		}
		return true
	})
	if info, err := cons.Info(ctx); err != nil || info.NumPending != 0 || info.NumAckPending < 3 {
		t.Fatalf("consumer: %+v (%v); want 0 pending and the 3 new entries at least unacknowledged", info, err)
	}

	r = startCollector(t, srv.ClientURL(), store)
	r.waitHead(t, s.ID(), s.head(t).Seq)
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	if a := r.alerts(t, ""); len(a) != 0 {
		t.Fatalf("alerts: %s", details(a))
	}
	sameEntries(t, store, s.Ledger)
}
