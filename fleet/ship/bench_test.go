package ship_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/opx-dev/opx/fleet"
	"github.com/opx-dev/opx/fleet/natsrv"
	"github.com/opx-dev/opx/fleet/ship"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// BenchmarkShip ships a ledger of benchEntries notes to an embedded
// JetStream server, from the cursor to the last acknowledgement, beside
// the baseline in the same run: the same entry messages published raw
// (PublishMsgAsync, the same window, then every ack awaited), with no
// ledger read, no blobs, no cursor. It reports entries/s of both and the
// ratio.
func BenchmarkShip(b *testing.B) {
	const benchEntries = 5000
	srv, err := natsrv.Start(natsrv.Options{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Shutdown()
	l, err := ledger.Create(filepath.Join(b.TempDir(), "ledger.db"), ledger.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	recs := make([]ledger.Record, 0, benchEntries)
	for i := range benchEntries {
		recs = append(recs, event.MustRecord("s", &event.Note{Author: "bench", Text: fmt.Sprintf("entry %d of a benchmark, about as long as a tool call's record in a ledger", i)}))
	}
	if _, err := l.Append(context.Background(), ledger.Sync, recs...); err != nil {
		b.Fatal(err)
	}
	var raws [][]byte
	l.Range(0, benchEntries, func(e ledger.Entry) error { raws = append(raws, e.Raw); return nil })

	var shipD, rawD time.Duration
	for i := range b.N {
		// A prefix per round: each round ships the whole ledger anew.
		prefix := fmt.Sprintf("b%d", i)
		t0 := time.Now()
		s, err := ship.Start(context.Background(), ship.Config{URL: srv.ClientURL(), Prefix: prefix}, l, nil)
		if err != nil {
			b.Fatal(err)
		}
		for {
			st := s.Status()
			if st.HasAcked && st.Acked == uint64(len(raws)-1) {
				break
			}
			time.Sleep(time.Millisecond)
		}
		shipD += time.Since(t0)
		s.Close(0)

		rawD += rawPublish(b, srv.ClientURL(), fmt.Sprintf("r%d", i), l.ID(), raws)
	}
	n := float64(len(raws) * b.N)
	b.ReportMetric(n/shipD.Seconds(), "ship-entries/s")
	b.ReportMetric(n/rawD.Seconds(), "raw-entries/s")
	b.ReportMetric(rawD.Seconds()/shipD.Seconds(), "ship/raw")
}

// rawPublish publishes the entries' messages with the shipper's window,
// waits for every ack, and returns how long it took (streams included).
func rawPublish(b *testing.B, url, prefix, id string, raws [][]byte) time.Duration {
	nc, err := nats.Connect(url)
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(ship.MaxInFlight))
	ctx := context.Background()
	t0 := time.Now()
	if err := fleet.EnsureStreams(ctx, js, prefix, 1); err != nil {
		b.Fatal(err)
	}
	for i, raw := range raws {
		for _, m := range fleet.EntryMessages(prefix, id, uint64(i), raw) {
			if _, err := js.PublishMsgAsync(m); err != nil {
				b.Fatal(err)
			}
		}
	}
	select {
	case <-js.PublishAsyncComplete():
	case <-time.After(time.Minute):
		b.Fatal("raw publish: acks did not come")
	}
	return time.Since(t0)
}
