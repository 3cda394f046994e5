package fleet_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/opx-dev/opx/fleet"
	"github.com/opx-dev/opx/fleet/collector"
	"github.com/opx-dev/opx/fleet/natsrv"
	"github.com/opx-dev/opx/fleet/ship"
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
// a bounded window unacknowledged (the jetstream context's), and waits
// for every ack, failing on any publish that was not acknowledged.
func publishAll(b *testing.B, js jetstream.JetStream, prefix string, msgs []*nats.Msg) {
	b.Helper()
	futures := make([]jetstream.PubAckFuture, 0, len(msgs))
	for _, m := range msgs {
		c := nats.NewMsg(fleet.LedgerSubject(prefix, m.Subject[len(fleet.DefaultPrefix+".ledger."):]))
		c.Header, c.Data = m.Header, m.Data
		for {
			f, err := js.PublishMsgAsync(c)
			if err == nil {
				futures = append(futures, f)
				break
			}
			if !errors.Is(err, jetstream.ErrTooManyStalledMsgs) {
				b.Fatal(err)
			}
			// The window is full: wait for its acks, as a shipper does.
			<-js.PublishAsyncComplete()
		}
	}
	select {
	case <-js.PublishAsyncComplete():
	case <-time.After(5 * time.Minute):
		b.Fatal("publish acks did not come")
	}
	for i, f := range futures {
		select {
		case <-f.Ok():
		case err := <-f.Err():
			b.Fatalf("publish %d: %v", i, err)
		}
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
	publishAll(b, js, prefix, src.msgs)
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

// collectorIngest runs a collector (full verification: chain, signed
// checkpoints against its mirror tree, cosigning, durable commits) on a
// fresh store while src's messages are published under prefix, and
// returns the time until the mirror holds the whole source.
func collectorIngest(b *testing.B, url string, js jetstream.JetStream, prefix string, src *benchSource) time.Duration {
	b.Helper()
	done := make(chan struct{})
	var once sync.Once
	last := uint64(src.n - 1)
	store := b.TempDir()
	col, err := collector.New(collector.Config{URL: url, Prefix: prefix, Store: store, Logf: b.Logf,
		Stored: func(id string, head uint64) {
			if id == src.id && head == last {
				once.Do(func() { close(done) })
			}
		}})
	if err != nil {
		b.Fatal(err)
	}
	defer col.Close()
	ctx, cancel := context.WithCancel(context.Background())
	if err := fleet.EnsureStreams(ctx, js, prefix, 1); err != nil {
		b.Fatal(err)
	}
	ran := make(chan error, 1)
	start := time.Now()
	go func() { ran <- col.Run(ctx) }()
	publishAll(b, js, prefix, src.msgs)
	select {
	case <-done:
	case err := <-ran:
		b.Fatalf("the collector stopped: %v", err)
	case <-time.After(time.Minute):
		cancel()
		<-ran
		st, _ := collector.OpenStore(store)
		al, _ := st.Alerts()
		b.Fatalf("the collector did not take the whole source: %+v", al)
	}
	d := time.Since(start)
	cancel()
	<-ran
	return d
}

// BenchmarkIngest: the collector's ingest with full verification beside
// raw JetStream publish + consume of the same messages (the baseline), in
// the same run on the same server; target: collector >= 50% of raw.
func BenchmarkIngest(b *testing.B) {
	src := newBenchSource(b, b.TempDir(), *ingestEntries)
	nc, js, url := benchServer(b)
	var raw, col time.Duration
	for i := 0; b.Loop(); i++ {
		raw += rawIngest(b, nc, js, fmt.Sprintf("raw%d", i), src)
		col += collectorIngest(b, url, js, fmt.Sprintf("col%d", i), src)
	}
	if st, err := js.Stream(context.Background(), fleet.LedgerStream("raw0")); err == nil {
		if info, err := st.Info(context.Background()); err == nil {
			b.ReportMetric(float64(info.State.Bytes)/float64(info.State.Msgs), "stream-bytes/entry")
		}
	}
	rawRate := float64(src.n*b.N) / raw.Seconds()
	colRate := float64(src.n*b.N) / col.Seconds()
	b.ReportMetric(rawRate, "raw-entries/s")
	b.ReportMetric(colRate, "collector-entries/s")
	b.ReportMetric(100*colRate/rawRate, "%-of-raw")
}

var (
	ingestEntries = flag.Int("fleet.ingest-entries", 20000, "entries of the ingest benchmark's source")
	lagEngines    = flag.Int("fleet.lag-engines", 50, "engines of the lag benchmark")
	lagRate       = flag.Int("fleet.lag-rate", 100, "entries per second each engine appends")
	lagFor        = flag.Duration("fleet.lag-for", 10*time.Second, "how long the engines append")
	lagSync       = flag.Bool("fleet.lag-sync", false, "each append fsyncs (Sync) instead of group commit (Async)")
)

type noRecorder struct{}

func (noRecorder) RecordCosigned(context.Context, *event.Cosigned) error { return nil }

// BenchmarkLag: end-to-end lag from an engine's append to the
// collector's verified, durable mirror holding the entry (its Stored
// hook), with 50 engines simulated as goroutines, each a real ledger and
// a real shipper, offering 100 entries/s, against one embedded JetStream
// server and one collector. By default the appends are Async (group
// commit, as the engine records most events) and the lag counts from the
// Append call, so it includes the wait for the group commit; with
// -fleet.lag-sync each append fsyncs and the lag counts from its return
// (the commit). entries/s is what the engines achieved.
func BenchmarkLag(b *testing.B) {
	_, _, url := benchServer(b)
	for b.Loop() {
		lags := runLag(b, url, *lagEngines, *lagRate, *lagFor)
		slices.Sort(lags)
		pct := func(p float64) float64 {
			return float64(lags[min(len(lags)-1, int(p*float64(len(lags))))].Microseconds()) / 1000
		}
		b.ReportMetric(pct(0.50), "p50-ms")
		b.ReportMetric(pct(0.99), "p99-ms")
		b.ReportMetric(pct(1), "max-ms")
		b.ReportMetric(float64(len(lags))/lagFor.Seconds(), "entries/s")
	}
}

func runLag(b *testing.B, url string, engines, rate int, d time.Duration) []time.Duration {
	b.Helper()
	prefix := fmt.Sprintf("lag%d", time.Now().UnixNano())
	var mu sync.Mutex
	committed := map[string][]time.Time{} // id -> commit time by seq
	seen := map[string]uint64{}           // id -> entries measured
	var lags []time.Duration
	stored := func(id string, head uint64) {
		now := time.Now()
		mu.Lock()
		defer mu.Unlock()
		ts := committed[id]
		for s := seen[id]; s <= head && s < uint64(len(ts)); s++ {
			if !ts[s].IsZero() {
				lags = append(lags, now.Sub(ts[s]))
			}
			seen[id] = s + 1
		}
	}
	col, err := collector.New(collector.Config{URL: url, Prefix: prefix, Store: b.TempDir(), Stored: stored})
	if err != nil {
		b.Fatal(err)
	}
	defer col.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ran := make(chan error, 1)
	go func() { ran <- col.Run(ctx) }()

	dir := b.TempDir()
	var wg sync.WaitGroup
	heads := make([]uint64, engines)
	ids := make([]string, engines)
	for i := range engines {
		l, err := ledger.Create(filepath.Join(dir, fmt.Sprintf("e%d.db", i)), ledger.Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer l.Close()
		ids[i] = l.ID()
		mu.Lock()
		committed[l.ID()] = []time.Time{{}} // genesis: not measured
		mu.Unlock()
		sh, err := ship.Start(ctx, ship.Config{URL: url, Prefix: prefix, Host: "bench", Workspace: fmt.Sprintf("/ws/%d", i)}, l, noRecorder{})
		if err != nil {
			b.Fatal(err)
		}
		defer sh.Close(time.Second)
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := time.NewTicker(time.Second / time.Duration(rate))
			defer t.Stop()
			end := time.Now().Add(d)
			for n := 0; time.Now().Before(end); n++ {
				<-t.C
				d := ledger.Async
				if *lagSync {
					d = ledger.Sync
				}
				at := time.Now()
				a, err := l.Append(ctx, d, ledger.Record{Session: "ses_bench", Type: ledger.TypeNote,
					Data: map[string]any{"author": "bench", "text": fmt.Sprintf("engine %d entry %d: a tool call's worth of text %0200d", i, n, n)}})
				if err != nil {
					b.Error(err)
					return
				}
				if *lagSync {
					at = time.Now() // committed and fsynced
				}
				mu.Lock()
				ts := committed[l.ID()]
				for uint64(len(ts)) <= a[0].Seq {
					ts = append(ts, time.Time{})
				}
				ts[a[0].Seq] = at
				committed[l.ID()] = ts
				mu.Unlock()
				heads[i] = a[0].Seq
			}
		}()
	}
	wg.Wait()
	waitUntil := time.Now().Add(2 * time.Minute)
	for {
		mu.Lock()
		all := true
		for i, id := range ids {
			if seen[id] <= heads[i] {
				all = false
			}
		}
		mu.Unlock()
		if all {
			break
		}
		if time.Now().After(waitUntil) {
			b.Fatal("the collector did not take every engine's entries")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-ran
	mu.Lock()
	defer mu.Unlock()
	return append([]time.Duration(nil), lags...)
}
