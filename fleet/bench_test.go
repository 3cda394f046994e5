package fleet_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/opx-dev/opx/fleet"
	"github.com/opx-dev/opx/fleet/natsrv"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/tlog"
)

// benchSource is a signed source ledger and its messages on the wire.
type benchSource struct {
	id   string
	path string
	msgs []*nats.Msg // under prefix "opx"; resubjected per run
	n    int         // entries
}

// newBenchSource writes a ledger of n entries as an engine would: a
// ledger.key, notes of a few hundred bytes, a signed ledger.checkpoint
// every 1,000 entries, and returns its entries as wire messages.
func newBenchSource(b *testing.B, dir string, n int) *benchSource {
	b.Helper()
	path := filepath.Join(dir, "source.db")
	var signer *tlog.Signer
	l, err := ledger.Create(path, ledger.Options{NoSync: true,
		SignCheckpoint: func(th ledger.TreeHead) (string, error) { return signer.Sign(th.Size, th.Root) }})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	if signer, err = tlog.CreateKey(dir, tlog.Origin(l.ID())); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if _, err := l.Append(ctx, ledger.Async, event.MustRecord("", &event.Key{VKey: signer.Verifier().String(), Reason: event.KeyCreated})); err != nil {
		b.Fatal(err)
	}
	for i := 2; i < n; {
		var recs []ledger.Record
		for ; i < n && len(recs) < 100 && i%1000 != 0; i++ {
			recs = append(recs, ledger.Record{Session: fmt.Sprintf("ses_%03d", i/500), Type: ledger.TypeNote,
				Data: map[string]any{"author": "bench", "text": fmt.Sprintf("entry %d: a tool call's worth of text, %0200d", i, i)}})
		}
		if len(recs) > 0 {
			if _, err := l.Append(ctx, ledger.Async, recs...); err != nil {
				b.Fatal(err)
			}
		}
		if i < n && i%1000 == 0 {
			if _, err := l.Checkpoint(ctx, ledger.Async); err != nil {
				b.Fatal(err)
			}
			i++
		}
	}
	if err := l.Sync(ctx); err != nil {
		b.Fatal(err)
	}
	s := &benchSource{id: l.ID(), path: path}
	head, _ := l.Head()
	err = l.RangeRaw(0, head.Seq, func(seq uint64, raw []byte) error {
		s.msgs = append(s.msgs, fleet.EntryMessages(fleet.DefaultPrefix, s.id, seq, append([]byte(nil), raw...))...)
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	s.n = int(head.Seq) + 1
	return s
}

// publishAll publishes msgs under prefix as a shipper does: asynchronously,
// at most window unacknowledged, and waits for every ack.
func publishAll(b *testing.B, js jetstream.JetStream, prefix string, msgs []*nats.Msg, window int) {
	b.Helper()
	for _, m := range msgs {
		c := nats.NewMsg(fleet.LedgerSubject(prefix, m.Subject[len(fleet.DefaultPrefix+".ledger."):]))
		c.Header, c.Data = m.Header, m.Data
		if _, err := js.PublishMsgAsync(c); err != nil {
			b.Fatal(err)
		}
	}
	select {
	case <-js.PublishAsyncComplete():
	case <-time.After(5 * time.Minute):
		b.Fatal("publish acks did not come")
	}
}

// rawIngest is the baseline: the same messages published to the ledger
// stream and consumed by a durable pull consumer with explicit acks, and
// nothing else (no parsing, no verification, no store).
func rawIngest(b *testing.B, nc *nats.Conn, js jetstream.JetStream, prefix string, src *benchSource) time.Duration {
	b.Helper()
	ctx := context.Background()
	if err := fleet.EnsureStreams(ctx, js, prefix, 1); err != nil {
		b.Fatal(err)
	}
	cons, err := js.CreateOrUpdateConsumer(ctx, fleet.LedgerStream(prefix), jetstream.ConsumerConfig{
		Durable: "raw", AckPolicy: jetstream.AckExplicitPolicy, FilterSubject: fleet.LedgerSubjects(prefix), MaxAckPending: 10000})
	if err != nil {
		b.Fatal(err)
	}
	var got atomic.Int64
	done := make(chan struct{})
	start := time.Now()
	cc, err := cons.Consume(func(m jetstream.Msg) {
		m.Data()
		m.Ack()
		if got.Add(1) == int64(len(src.msgs)) {
			close(done)
		}
	}, jetstream.PullMaxMessages(1000))
	if err != nil {
		b.Fatal(err)
	}
	defer cc.Stop()
	publishAll(b, js, prefix, src.msgs, 1000)
	select {
	case <-done:
	case <-time.After(5 * time.Minute):
		b.Fatalf("consumed %d of %d", got.Load(), len(src.msgs))
	}
	return time.Since(start)
}

// benchServer starts an embedded server and connects to it.
func benchServer(b *testing.B) (*nats.Conn, jetstream.JetStream, string) {
	b.Helper()
	s, err := natsrv.Start(natsrv.Options{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(s.Shutdown)
	nc, err := nats.Connect(s.ClientURL())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(nc.Close)
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(1000))
	if err != nil {
		b.Fatal(err)
	}
	return nc, js, s.ClientURL()
}

// BenchmarkIngest_Raw is the raw JetStream baseline alone (publish and
// consume of one source's entries); BenchmarkIngest runs it beside the
// collector and reports the ratio.
func BenchmarkIngest_Raw(b *testing.B) {
	src := newBenchSource(b, b.TempDir(), 20000)
	nc, js, _ := benchServer(b)
	var total time.Duration
	for i := 0; b.Loop(); i++ {
		total += rawIngest(b, nc, js, fmt.Sprintf("raw%d", i), src)
	}
	b.ReportMetric(float64(src.n*b.N)/total.Seconds(), "entries/s")
}
