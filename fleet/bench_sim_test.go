package fleet_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/opx-dev/opx/fleet"
	"github.com/opx-dev/opx/fleet/collector"
	"github.com/opx-dev/opx/fleet/natsrv"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/tlog"
)

// BenchmarkFleetSim measures one collector under many simulated sources
// (issue 31). A simulated source is a real signed opx ledger prepared
// once (its own id, ledger.key entry, notes, signed checkpoints), whose
// recorded entries are published straight to JetStream as wire messages
// (fleet.EntryMessages) at a steady rate: no ledger of its own at run
// time, so the disk belongs to the collector.
//
// Each scenario (-fleet.sim, SOURCESxRATE, default the three)
// runs three times on a fresh embedded server each, the same publishers
// every time:
//   - pub: the publishers alone (no consumer), for their CPU and the
//     server's cost of storing the stream;
//   - raw: a durable pull consumer that only acks (the baseline), its
//     lag taken when it receives an entry;
//   - collector: a collector with its default durability (fsyncs), its
//     lag taken at its Stored callback (verified and durable in the journal,
//     acknowledged) and, as mat_*, at Materialized (its mirror written).
//
// Each run first publishes every source's first three entries (genesis,
// key, first checkpoint) and waits until they are taken (the collector:
// acknowledged and written in their mirrors; warm_s: the mirrors created,
// once per source), then publishes for -fleet.sim-for at RATE entries/s
// per source, each source's publishes spread over the second by a fixed
// phase, each stamped with its publish time, and waits until every
// published entry is taken. The CPU is the process's (getrusage, user +
// system) from the start of that phase to its end; the publishers and
// the in-process server are in every run, so cpu_s (collector − pub) and
// raw_cpu_s (raw − pub) are the consumers' own, and cpu_ratio their
// ratio (cpu_us/entry: the collector's per entry). The machine's other
// load counts in every lag figure and little in the CPU ones: note
// `uptime` beside them. grow_ratio is the mean lag of the entries published in the
// phase's last third over that of its first third (1: steady; above:
// the collector falls behind).
//
//	go test ./fleet -run '^$' -bench BenchmarkFleetSim -benchtime 1x -timeout 60m \
//	    -args -fleet.sim 1000x1,1000x10,10000x0.1 -fleet.sim-for 30s
//
// Sources are prepared in parallel on a memory file system (10,000 in
// about 15 s here) and held in memory; the stores and streams go to
// -fleet.sim-dir (the disk the collector would have).
func BenchmarkFleetSim(b *testing.B) {
	scens, err := parseSimScenarios(*simScenarios)
	if err != nil {
		b.Fatal(err)
	}
	if *simFor <= 0 {
		b.Fatalf("-fleet.sim-for %v: want a positive duration", *simFor)
	}
	// Each source needs its three warm-up entries and RATE × duration
	// more, in the largest scenario that has it.
	most := 0
	for _, sc := range scens {
		most = max(most, sc.sources)
	}
	entries := make([]int, most)
	for _, sc := range scens {
		e := simWarm + int(sc.rate*simFor.Seconds()+0.999) + 1
		for i := range sc.sources {
			entries[i] = max(entries[i], e)
		}
	}
	total := 0
	for _, e := range entries {
		total += e
	}
	// Each entry is held in memory (~450 bytes) and its publish time
	// twice (16 bytes).
	if total > maxSimEntries {
		b.Fatalf("-fleet.sim and -fleet.sim-for ask for %d entries; at most %d", total, maxSimEntries)
	}
	start := time.Now()
	pool := prepareSimSources(b, simPoolDir(b), entries)
	b.Logf("prepared %d source ledgers (%d entries) in %v", len(pool), simTotal(pool), time.Since(start).Round(time.Millisecond))
	for _, sc := range scens {
		b.Run(sc.String(), func(b *testing.B) {
			var r simReport
			for b.Loop() {
				r = runSimScenario(b, pool[:sc.sources], sc, strings.Split(*simRuns, ","))
			}
			r.report(b)
		})
	}
}

var (
	simScenarios = flag.String("fleet.sim", "1000x1,1000x10,10000x0.1", "BenchmarkFleetSim's scenarios: SOURCESxRATE (entries/s per source), comma-separated")
	simFor       = flag.Duration("fleet.sim-for", 30*time.Second, "how long BenchmarkFleetSim's sources publish, per scenario and run")
	simDir       = flag.String("fleet.sim-dir", "", "where BenchmarkFleetSim keeps its sources, streams and stores (default: a temporary directory); put it on the disk to measure")
	simPool      = flag.String("fleet.sim-pool", "/dev/shm", "where BenchmarkFleetSim writes its source ledgers before it reads them into memory (a memory file system when there is one: their preparation is not what it measures)")
	simRuns      = flag.String("fleet.sim-runs", "pub,raw,collector", "BenchmarkFleetSim's runs per scenario (pub and raw give the baselines)")
	simProfile   = flag.String("fleet.sim-cpuprofile", "", "write a CPU profile of each collector run's measured phase to this path, the scenario appended (e.g. cpu.prof.1000x1); not with -test.cpuprofile")
)

// maxSimEntries bounds the entries prepared (a few GB of memory).
const maxSimEntries = 5_000_000

// simWarm is how many entries of each source the warm-up publishes:
// genesis, ledger.key and the first signed checkpoint.
const simWarm = 3

type simScenario struct {
	sources int
	rate    float64 // entries/s per source
}

func (s simScenario) String() string {
	return fmt.Sprintf("%dx%s", s.sources, strconv.FormatFloat(s.rate, 'f', -1, 64))
}

func parseSimScenarios(v string) ([]simScenario, error) {
	var out []simScenario
	for f := range strings.SplitSeq(v, ",") {
		n, r, ok := strings.Cut(strings.TrimSpace(f), "x")
		sources, err1 := strconv.Atoi(n)
		rate, err2 := strconv.ParseFloat(r, 64)
		if !ok || err1 != nil || err2 != nil || sources < 1 || sources > 100000 || !(rate > 0 && rate <= 1000) {
			return nil, fmt.Errorf("-fleet.sim: %q: want SOURCESxRATE, e.g. 1000x10", f)
		}
		out = append(out, simScenario{sources, rate})
	}
	return out, nil
}

// simBase is the directory every run of this benchmark process works in.
func simBase(b *testing.B) string {
	if *simDir == "" {
		return b.TempDir()
	}
	d, err := os.MkdirTemp(*simDir, "fleetsim")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// simPoolDir is a new directory under -fleet.sim-pool, or the test's
// temporary directory when that is not writable.
func simPoolDir(b *testing.B) string {
	if d, err := os.MkdirTemp(*simPool, "opx-fleetsim"); err == nil {
		b.Cleanup(func() { os.RemoveAll(d) })
		return d
	}
	return b.TempDir()
}

// simSource is a prepared source: its id and its entries' stored bytes.
type simSource struct {
	id   string
	raws [][]byte
}

func simTotal(pool []*simSource) int {
	n := 0
	for _, s := range pool {
		n += len(s.raws)
	}
	return n
}

// prepareSimSources writes len(entries) signed source ledgers under dir,
// source i with entries[i] entries, in parallel and without fsync, and
// returns their entries' bytes.
func prepareSimSources(b *testing.B, dir string, entries []int) []*simSource {
	b.Helper()
	pool := make([]*simSource, len(entries))
	var next atomic.Int64
	var wg sync.WaitGroup
	// Creating files waits on the file system more than on the CPU.
	workers := 4 * runtime.GOMAXPROCS(0)
	errs := make(chan error, workers)
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(entries) {
					return
				}
				s, err := prepareSimSource(filepath.Join(dir, strconv.Itoa(i)), i, entries[i])
				if err != nil {
					errs <- fmt.Errorf("source %d: %w", i, err)
					return
				}
				pool[i] = s
				// Its entries are in memory: the files are not needed
				// again (10,000 ledgers hold hundreds of MB).
				os.RemoveAll(filepath.Join(dir, strconv.Itoa(i)))
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
	return pool
}

// prepareSimSource writes one source ledger as an engine would: genesis,
// ledger.key, a signed checkpoint, then notes of a few hundred bytes with
// a signed checkpoint every 100 entries; n entries in all.
func prepareSimSource(dir string, k, n int) (*simSource, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	var signer *tlog.Signer
	l, err := ledger.Create(filepath.Join(dir, "ledger.db"), ledger.Options{NoSync: true,
		SignCheckpoint: func(th ledger.TreeHead) (string, error) { return signer.Sign(th.Size, th.Root) }})
	if err != nil {
		return nil, err
	}
	defer l.Close()
	if signer, err = tlog.CreateKey(dir, tlog.Origin(l.ID())); err != nil {
		return nil, err
	}
	ctx := context.Background()
	if _, err := l.Append(ctx, ledger.Async, event.MustRecord("", &event.Key{VKey: signer.Verifier().String(), Reason: event.KeyCreated})); err != nil {
		return nil, err
	}
	for seq := 2; seq < n; seq++ {
		if seq%100 == 2 { // 2, 102, 202…
			_, err = l.Checkpoint(ctx, ledger.Async)
		} else {
			_, err = l.Append(ctx, ledger.Async, ledger.Record{Session: fmt.Sprintf("ses_%03d", seq/500), Type: ledger.TypeNote,
				Data: map[string]any{"author": "bench", "text": fmt.Sprintf("source %d entry %d: a tool call's worth of text, %0200d", k, seq, seq)}})
		}
		if err != nil {
			return nil, err
		}
	}
	if err := l.Sync(ctx); err != nil {
		return nil, err
	}
	s := &simSource{id: l.ID()}
	err = l.RangeRaw(0, uint64(n-1), func(_ uint64, raw []byte) error {
		s.raws = append(s.raws, append([]byte(nil), raw...))
		return nil
	})
	if err == nil && len(s.raws) != n {
		err = fmt.Errorf("read %d entries of %d", len(s.raws), n)
	}
	return s, err
}

// lagBook records, per source, when each entry was published and the
// lag until it was taken. Take is called in order of seq per source (a
// collector's head, a raw consumer's next message).
type lagBook struct {
	pubAt [][]atomic.Int64 // source -> seq -> publish time (unix ns); 0: not measured
	ids   map[string]int
	start time.Time // of the measured phase

	mu      sync.Mutex
	next    []uint64 // source -> next seq not yet taken
	samples []lagSample
}

type lagSample struct{ at, lag time.Duration } // since start; lag

func newLagBook(pool []*simSource, entries int) *lagBook {
	l := &lagBook{pubAt: make([][]atomic.Int64, len(pool)), ids: map[string]int{}, next: make([]uint64, len(pool))}
	for i, s := range pool {
		l.pubAt[i] = make([]atomic.Int64, entries)
		l.ids[s.id] = i
	}
	return l
}

// take notes that source id holds every entry up to head now.
func (l *lagBook) take(id string, head uint64) {
	now := time.Now().UnixNano()
	i, ok := l.ids[id]
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for ; l.next[i] <= head; l.next[i]++ {
		if l.next[i] >= uint64(len(l.pubAt[i])) {
			l.next[i] = head + 1
			break
		}
		if at := l.pubAt[i][l.next[i]].Load(); at != 0 {
			l.samples = append(l.samples, lagSample{time.Duration(at - l.start.UnixNano()), time.Duration(now - at)})
		}
	}
}

// took reports whether every source holds its entries before upTo[i].
func (l *lagBook) took(upTo []uint64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, n := range upTo {
		if l.next[i] < n {
			return false
		}
	}
	return true
}

// started is how many sources had an entry taken.
func (l *lagBook) started() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, x := range l.next {
		if x > 0 {
			n++
		}
	}
	return n
}

func (l *lagBook) behind(upTo []uint64) (sources int, entries uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, n := range upTo {
		if l.next[i] < n {
			sources++
			entries += n - l.next[i]
		}
	}
	return sources, entries
}

// lagStats are a run's lag figures.
type lagStats struct {
	n             int
	p50, p99, max time.Duration
	grow          float64                              // mean lag of the last third over the first's
	thirds        [3]struct{ mean, p99 time.Duration } // by publish time
}

func (l *lagBook) stats(d time.Duration) lagStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	var st lagStats
	if len(l.samples) == 0 {
		return st
	}
	lags := make([]time.Duration, len(l.samples))
	var first, last time.Duration
	var nf, nl int
	for i, s := range l.samples {
		lags[i] = s.lag
		switch {
		case s.at < d/3:
			first += s.lag
			nf++
		case s.at >= 2*d/3:
			last += s.lag
			nl++
		}
	}
	slices.Sort(lags)
	pct := func(p float64) time.Duration { return lags[min(len(lags)-1, int(p*float64(len(lags))))] }
	st.n, st.p50, st.p99, st.max = len(lags), pct(0.5), pct(0.99), lags[len(lags)-1]
	if nf > 0 && nl > 0 && first > 0 {
		st.grow = (float64(last) / float64(nl)) / (float64(first) / float64(nf))
	}
	var by [3][]time.Duration
	for _, s := range l.samples {
		k := min(2, int(3*s.at/max(d, 1)))
		by[max(k, 0)] = append(by[max(k, 0)], s.lag)
	}
	for k, b := range by {
		if len(b) == 0 {
			continue
		}
		var sum time.Duration
		for _, x := range b {
			sum += x
		}
		slices.Sort(b)
		st.thirds[k].mean, st.thirds[k].p99 = sum/time.Duration(len(b)), b[min(len(b)-1, len(b)*99/100)]
	}
	return st
}

// simRun is one run's outcome.
type simRun struct {
	lag     lagStats
	cpu     time.Duration // the measured phase's, whole process
	warm    time.Duration
	entries int           // published in the measured phase
	late    time.Duration // the most a publish came after its schedule
	drain   time.Duration // from the last publish until every entry was taken
	files   int           // open descriptors at the end of the phase
	stopped error         // the collector's, if it stopped
	// mat is the lag to the Materialized callback, when the collector has
	// one (see simHooks).
	mat lagStats
}

type simReport struct {
	sc                simScenario
	pub, raw, col     *simRun
	collectorErr      error
	collectorStartErr error
}

func (r simReport) report(b *testing.B) {
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	if c := r.col; c != nil {
		b.ReportMetric(ms(c.lag.p50), "p50_ms")
		b.ReportMetric(ms(c.lag.p99), "p99_ms")
		b.ReportMetric(ms(c.lag.max), "max_ms")
		b.ReportMetric(c.lag.grow, "grow_ratio")
		b.ReportMetric(c.warm.Seconds(), "warm_s")
		b.ReportMetric(ms(c.drain), "drain_ms")
		b.ReportMetric(float64(c.files), "fds")
		if c.mat.n > 0 {
			b.ReportMetric(ms(c.mat.p50), "mat_p50_ms")
			b.ReportMetric(ms(c.mat.p99), "mat_p99_ms")
			b.ReportMetric(ms(c.mat.max), "mat_max_ms")
		}
		b.ReportMetric(float64(c.entries)/simFor.Seconds(), "entries/s")
	}
	if c := r.raw; c != nil {
		b.ReportMetric(ms(c.lag.p99), "raw_p99_ms")
		b.ReportMetric(c.lag.grow, "raw_grow_ratio")
	}
	if p := r.pub; p != nil {
		b.ReportMetric(p.cpu.Seconds(), "pub_cpu_s")
		if c := r.col; c != nil {
			b.ReportMetric((c.cpu - p.cpu).Seconds(), "cpu_s")
			if c.entries > 0 {
				// The measure: cost per entry, whatever the sources.
				b.ReportMetric(float64((c.cpu-p.cpu).Microseconds())/float64(c.entries), "cpu_us/entry")
			}
		}
		if w := r.raw; w != nil {
			b.ReportMetric((w.cpu - p.cpu).Seconds(), "raw_cpu_s")
			if c := r.col; c != nil && w.cpu > p.cpu {
				b.ReportMetric(float64(c.cpu-p.cpu)/float64(w.cpu-p.cpu), "cpu_ratio")
			}
		}
	}
	var late time.Duration
	for _, x := range []*simRun{r.pub, r.raw, r.col} {
		if x != nil {
			late = max(late, x.late)
		}
	}
	b.ReportMetric(ms(late), "pub_late_ms")
}

// runSimScenario runs the runs -fleet.sim-runs names for sc.
func runSimScenario(b *testing.B, pool []*simSource, sc simScenario, runs []string) simReport {
	b.Helper()
	r := simReport{sc: sc}
	for _, kind := range runs {
		base := simBase(b)
		switch strings.TrimSpace(kind) {
		case "pub":
			r.pub = runSim(b, base, pool, sc, "pub")
		case "raw":
			r.raw = runSim(b, base, pool, sc, "raw")
		case "collector":
			r.col = runSim(b, base, pool, sc, "collector")
		default:
			b.Fatalf("-fleet.sim-runs: %q: want pub, raw or collector", kind)
		}
		os.RemoveAll(base)
		x := map[string]*simRun{"pub": r.pub, "raw": r.raw, "collector": r.col}[strings.TrimSpace(kind)]
		th := x.lag.thirds
		b.Logf("%s %s: warm %v, %d entries, p50 %v p99 %v max %v grow %.2f (mean/p99 by third: %v/%v %v/%v %v/%v), cpu %.2fs, late %v, drain %v, fds %d",
			sc, kind, x.warm.Round(time.Millisecond), x.entries, x.lag.p50, x.lag.p99, x.lag.max, x.lag.grow,
			th[0].mean.Round(time.Millisecond), th[0].p99.Round(time.Millisecond), th[1].mean.Round(time.Millisecond), th[1].p99.Round(time.Millisecond),
			th[2].mean.Round(time.Millisecond), th[2].p99.Round(time.Millisecond), x.cpu.Seconds(),
			x.late.Round(time.Millisecond), x.drain.Round(time.Millisecond), x.files)
	}
	return r
}

// simHooks connects a collector's callbacks to the lag books: Stored
// (verified and durable in the journal: what is acknowledged) and
// Materialized (the mirror written behind the journal), reported as
// mat_p50_ms, mat_p99_ms and mat_max_ms.
func simHooks(cfg *collector.Config, stored, mat *lagBook) {
	cfg.Stored = stored.take
	cfg.Materialized = mat.take
}

// runSim runs one run of kind "pub", "raw" or "collector" on a fresh
// embedded server under base.
func runSim(b *testing.B, base string, pool []*simSource, sc simScenario, kind string) *simRun {
	b.Helper()
	srv, err := natsrv.Start(natsrv.Options{Dir: filepath.Join(base, "nats")})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Shutdown()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	entries := len(pool[0].raws)
	for _, s := range pool {
		entries = min(entries, len(s.raws))
	}
	book := newLagBook(pool, entries)
	mat := newLagBook(pool, entries)
	run := &simRun{}

	// The publishers' connections, a few for all the sources.
	const shards = 4
	var pubErrs atomic.Int64
	jss := make([]jetstream.JetStream, shards)
	for i := range jss {
		nc, err := nats.Connect(srv.ClientURL(), nats.Name("opx bench sources"))
		if err != nil {
			b.Fatal(err)
		}
		defer nc.Close()
		jss[i], err = jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(4000),
			jetstream.WithPublishAsyncErrHandler(func(jetstream.JetStream, *nats.Msg, error) { pubErrs.Add(1) }))
		if err != nil {
			b.Fatal(err)
		}
	}
	if err := fleet.EnsureStreams(ctx, jss[0], fleet.DefaultPrefix, 1); err != nil {
		b.Fatal(err)
	}

	// The consumer.
	var ran chan error
	switch kind {
	case "collector":
		cfg := collector.Config{URL: srv.ClientURL(), Store: filepath.Join(base, "store"), MaxSources: max(collector.DefaultMaxSources, len(pool)),
			Logf: func(f string, a ...any) {
				// A line per new source would bury the rest.
				if line := fmt.Sprintf(f, a...); !strings.Contains(line, "new source") && !strings.Contains(line, "consuming") {
					b.Log(line)
				}
			}}
		simHooks(&cfg, book, mat)
		col, err := collector.New(cfg)
		if err != nil {
			b.Fatal(err)
		}
		defer col.Close()
		ran = make(chan error, 1)
		go func() { ran <- col.Run(ctx) }()
		defer func() { cancel(); <-ran }()
	case "raw":
		// Its own connection, as a collector has.
		nc, err := nats.Connect(srv.ClientURL(), nats.Name("opx bench raw consumer"))
		if err != nil {
			b.Fatal(err)
		}
		defer nc.Close()
		js, err := jetstream.New(nc)
		if err != nil {
			b.Fatal(err)
		}
		cons, err := js.CreateOrUpdateConsumer(ctx, fleet.LedgerStream(fleet.DefaultPrefix), jetstream.ConsumerConfig{
			Durable: "raw", AckPolicy: jetstream.AckExplicitPolicy, FilterSubject: fleet.LedgerSubjects(fleet.DefaultPrefix), MaxAckPending: 64 << 10})
		if err != nil {
			b.Fatal(err)
		}
		cc, err := cons.Consume(func(m jetstream.Msg) {
			id, _ := strings.CutPrefix(m.Subject(), fleet.DefaultPrefix+".ledger.")
			if seq, err := strconv.ParseUint(m.Headers().Get(fleet.HdrSeq), 10, 64); err == nil {
				book.take(id, seq)
			}
			m.Ack()
		}, jetstream.PullMaxMessages(1000))
		if err != nil {
			b.Fatal(err)
		}
		defer cc.Stop()
	case "pub":
	default:
		b.Fatalf("run %q", kind)
	}
	publish := func(js jetstream.JetStream, i int, seq uint64) {
		for _, m := range fleet.EntryMessages(fleet.DefaultPrefix, pool[i].id, seq, pool[i].raws[seq]) {
			for {
				_, err := js.PublishMsgAsync(m)
				if err == nil {
					break
				}
				if !errors.Is(err, jetstream.ErrTooManyStalledMsgs) {
					b.Error(err)
					return
				}
				<-js.PublishAsyncComplete()
			}
		}
	}
	allAcked := func() {
		for _, js := range jss {
			select {
			case <-js.PublishAsyncComplete():
			case <-time.After(5 * time.Minute):
				b.Fatal("publish acks did not come")
			}
		}
	}
	// waitTaken waits until the consumer took every entry before upTo
	// (as bk records it), or returns the collector's error if it stopped.
	waitTaken := func(what string, bk *lagBook, upTo []uint64, within time.Duration) error {
		if kind == "pub" {
			allAcked()
			return nil
		}
		deadline := time.Now().Add(within)
		for !bk.took(upTo) {
			if ran != nil {
				select {
				case err := <-ran:
					ran <- err
					if err == nil {
						err = errors.New("it returned")
					}
					return err
				default:
				}
			}
			if time.Now().After(deadline) {
				n, e := bk.behind(upTo)
				b.Fatalf("%s %s: %s: %d sources still lack %d entries after %v", sc, kind, what, n, e, within)
				return nil
			}
			time.Sleep(10 * time.Millisecond)
		}
		return nil
	}

	// Warm-up: every source's first entries, mirrors created.
	warmStart := time.Now()
	for i := range pool {
		for seq := range uint64(simWarm) {
			publish(jss[i%shards], i, seq)
		}
	}
	warmTo := make([]uint64, len(pool))
	for i := range warmTo {
		warmTo[i] = simWarm
	}
	// The collector's mirrors too: creating a mirror is a once-per-source
	// cost (an fsynced bbolt file, ~15 ms), not the steady state measured.
	err = waitTaken("warm-up", book, warmTo, 10*time.Minute)
	if err == nil && kind == "collector" {
		err = waitTaken("warm-up (mirrors)", mat, warmTo, 10*time.Minute)
	}
	if err != nil {
		// A finding, not a fault of the benchmark (today's collector
		// holds two descriptors per source): say how far it got.
		run.warm = time.Since(warmStart)
		run.files = openFiles()
		b.Errorf("%s %s: the collector stopped during the warm-up, after %v, with %d of %d sources' mirrors created (%d descriptors open now): %v",
			sc, kind, run.warm.Round(time.Millisecond), book.started(), len(pool), run.files, err)
		run.stopped = err
		return run
	}
	run.warm = time.Since(warmStart)

	// The measured phase.
	runtime.GC()
	if *simProfile != "" && kind == "collector" {
		f, err := os.Create(*simProfile + "." + sc.String())
		if err != nil {
			b.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			b.Fatal(err)
		}
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}
	cpu0 := processCPU(b)
	period := time.Duration(float64(time.Second) / sc.rate)
	d := *simFor
	book.start = time.Now().Add(10 * time.Millisecond)
	start := book.start
	last := make([]uint64, len(pool)) // per source: next seq to publish
	var late atomic.Int64
	var wg sync.WaitGroup
	for sh := range shards {
		wg.Go(func() {
			// This shard's sources, in order of phase (i/len(pool) of the
			// period): its publishes come due in that order, round after
			// round.
			var mine []int
			for i := sh; i < len(pool); i += shards {
				mine = append(mine, i)
			}
			if len(mine) == 0 {
				return
			}
			due := func(round, k int) time.Time {
				return start.Add(time.Duration(round)*period + period*time.Duration(mine[k])/time.Duration(len(pool)))
			}
			t := time.NewTicker(2 * time.Millisecond)
			defer t.Stop()
			round, k := 0, 0
			for {
				<-t.C
				now := time.Now()
				for {
					at := due(round, k)
					if !at.Before(start.Add(d)) {
						return
					}
					if at.After(now) {
						break
					}
					i := mine[k]
					seq := uint64(simWarm + round)
					if seq >= uint64(entries) {
						return
					}
					if l := now.Sub(at); l > time.Duration(late.Load()) {
						late.Store(int64(l))
					}
					book.pubAt[i][seq].Store(time.Now().UnixNano())
					mat.pubAt[i][seq].Store(book.pubAt[i][seq].Load())
					publish(jss[sh], i, seq)
					last[i] = seq + 1
					if k++; k == len(mine) {
						k, round = 0, round+1
					}
				}
			}
		})
	}
	wg.Wait()
	lastPub := time.Now()
	for i := range last {
		last[i] = max(last[i], simWarm)
		run.entries += int(last[i] - simWarm)
	}
	if err := waitTaken("the measured phase", book, last, 10*time.Minute); err != nil {
		b.Fatalf("%s %s: the collector stopped: %v", sc, kind, err)
	}
	run.drain = time.Since(lastPub)
	if kind == "collector" {
		// The mirrors' writes are the collector's cost too: its CPU is
		// counted until they hold every entry (they lag by their wait).
		if err := waitTaken("the mirrors", mat, last, 10*time.Minute); err != nil {
			b.Fatalf("%s %s: the collector stopped: %v", sc, kind, err)
		}
	}
	run.cpu = processCPU(b) - cpu0
	run.files = openFiles()
	run.late = time.Duration(late.Load())
	run.lag = book.stats(d)
	run.mat = mat.stats(d)
	if n := pubErrs.Load(); n > 0 {
		b.Fatalf("%d publishes failed", n)
	}
	return run
}

// processCPU is the CPU time the process used so far (user + system).
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// openFiles is how many descriptors the process has open (Linux; 0
// elsewhere).
func openFiles() int {
	es, _ := os.ReadDir("/proc/self/fd")
	return len(es)
}
