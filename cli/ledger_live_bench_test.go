package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/opx-dev/opx/cli"
	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/engine/registry"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/ledgertest"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
)

// arrivals records when each seq arrived.
type arrivals struct {
	mu   sync.Mutex
	at   map[uint64]time.Time
	cond *sync.Cond
}

func newArrivals() *arrivals {
	a := &arrivals{at: map[uint64]time.Time{}}
	a.cond = sync.NewCond(&a.mu)
	return a
}

func (a *arrivals) mark(seq uint64) {
	now := time.Now()
	a.mu.Lock()
	a.at[seq] = now
	a.cond.Broadcast()
	a.mu.Unlock()
}

func (a *arrivals) wait(seq uint64) time.Time {
	a.mu.Lock()
	defer a.mu.Unlock()
	for {
		if t, ok := a.at[seq]; ok {
			return t
		}
		a.cond.Wait()
	}
}

// lineClock is follow's stdout: it notes when each --json line is written.
type lineClock struct{ a *arrivals }

func (w lineClock) Write(p []byte) (int, error) {
	var ln struct {
		Seq uint64 `json:"seq"`
	}
	if json.Unmarshal(p, &ln) == nil {
		w.a.mark(ln.Seq)
	}
	return len(p), nil
}

// BenchmarkFollowLag measures the lag from a Sync append's return (the
// entry is durable) to `opx ledger follow --json` writing its line, with
// a real engine over loopback gRPC. The baseline, in the same run, is a
// bare Follow stream that checks nothing and prints nothing: the ratio is
// what follow's checks and printing cost.
func BenchmarkFollowLag(b *testing.B) {
	b.Setenv("OPX_LEDGER", "")
	dir := b.TempDir()
	path := ledgertest.Copy(b, ledgertest.New(b, filepath.Join(b.TempDir(), "ledger.db"), 10).Path, filepath.Join(dir, "ledger.db"))
	srv := serveLedger(b, path)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	follow := newArrivals()
	app := cli.NewApp()
	app.Writer, app.ErrWriter = lineClock{follow}, os.Stderr
	done := make(chan error, 1)
	go func() {
		done <- app.RunContext(ctx, []string{"opx", "ledger", "follow", "--json", "--ledger", path})
	}()

	bare := newArrivals()
	e, tok, err := registry.Lookup(registry.Dir(dir))
	if err != nil {
		b.Fatal(err)
	}
	conn, err := grpc.NewClient(e.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	h, _ := srv.l.Head()
	s, err := opxv1.NewLedgerServiceClient(conn).Follow(metadata.AppendToOutgoingContext(ctx, engine.TokenHeader, tok), &opxv1.FollowRequest{FromSeq: h.Seq + 1})
	if err != nil {
		b.Fatal(err)
	}
	go func() {
		for {
			en, err := s.Recv()
			if err != nil {
				return
			}
			bare.mark(en.Seq)
		}
	}()
	follow.wait(h.Seq) // follow is up

	var lag, base []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rec, _ := event.Record("", &event.Note{Author: "bench", Text: "entry " + strconv.Itoa(i)})
		app, err := srv.l.Append(ctx, ledger.Sync, rec)
		if err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		lag = append(lag, follow.wait(app[0].Seq).Sub(t0))
		base = append(base, bare.wait(app[0].Seq).Sub(t0))
	}
	b.StopTimer()
	p := func(d []time.Duration, q float64) float64 {
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		return float64(d[min(len(d)-1, int(q*float64(len(d))))].Microseconds())
	}
	b.ReportMetric(p(lag, 0.50), "p50-µs")
	b.ReportMetric(p(lag, 0.99), "p99-µs")
	b.ReportMetric(p(base, 0.50), "bare-p50-µs")
	b.ReportMetric(p(base, 0.99), "bare-p99-µs")
	if p(base, 0.5) > 0 {
		b.ReportMetric(p(lag, 0.50)/p(base, 0.50), "p50-ratio")
	}
	cancel()
	<-done
}

// BenchmarkVerifyThroughEngine verifies a ledger of $OPX_BENCH_ENTRIES
// entries (default 100,000) through a real engine (entries and blob
// frames streamed over loopback gRPC and checked by the client), with the
// offline Verify of the same file in the same run as the baseline.
func BenchmarkVerifyThroughEngine(b *testing.B) {
	n := 100_000
	if s := os.Getenv("OPX_BENCH_ENTRIES"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	b.Setenv("OPX_LEDGER", "")
	dir := b.TempDir()
	lt := ledgertest.New(b, filepath.Join(dir, "ledger.db"), n)
	offline := func() time.Duration {
		t0 := time.Now()
		l, err := ledger.OpenReadOnly(lt.Path)
		if err != nil {
			b.Fatal(err)
		}
		rep, err := l.Verify(ledger.VerifyOptions{})
		l.Close()
		if err != nil || !rep.OK {
			b.Fatal(err, rep.Err())
		}
		return time.Since(t0)
	}
	var off, live time.Duration
	for i := 0; i < b.N; i++ {
		off += offline()
	}
	serveLedger(b, lt.Path)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		app := cli.NewApp()
		var out lockedBuffer
		app.Writer, app.ErrWriter = &out, &out
		if err := app.Run([]string{"opx", "ledger", "verify", "--ledger", lt.Path}); err != nil {
			b.Fatal(err, out.String())
		}
		live += time.Since(t0)
	}
	b.StopTimer()
	perS := func(d time.Duration) float64 { return float64(n) * float64(b.N) / d.Seconds() }
	b.ReportMetric(perS(live), "entries/s")
	b.ReportMetric(perS(off), "offline-entries/s")
	b.ReportMetric(perS(live)/perS(off), "ratio")
	b.Log(fmt.Sprintf("%d entries: through the engine %.0f entries/s, offline %.0f entries/s", n, perS(live), perS(off)))
}
