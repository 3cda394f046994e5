package witness_test

import (
	"context"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/opx-dev/opx/engine/witness"
	"github.com/opx-dev/opx/internal/omniwitnesstest"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/tlog"
)

// roundTrips measures sign → cosigned recorded n times against the
// witness at url: append an entry, sign a checkpoint (ledger.checkpoint,
// durable), Submit, and wait until its ledger.cosigned is durable.
func roundTrips(b *testing.B, lg *testLog, url, vkey string, n int) []time.Duration {
	b.Helper()
	cosigned := make(chan uint64, 1)
	rec := func(ctx context.Context, p event.Payload) error {
		if err := lg.record(ctx, p); err != nil {
			return err
		}
		if c, ok := p.(*event.Cosigned); ok {
			cosigned <- c.TreeSize
		}
		return nil
	}
	s, err := witness.New(witness.Options{Witnesses: []witness.Witness{{URL: url, Key: vkey}}, Origin: tlog.Origin(lg.l.ID()),
		Ledger: lg.l, Record: rec})
	if err != nil {
		b.Fatal(err)
	}
	s.Start(context.Background())
	defer s.Close(time.Second)
	out := make([]time.Duration, 0, n)
	for range n {
		start := time.Now()
		note := lg.grow(1)
		s.Submit(note)
		want := sizeOf(b, note)
		for got := range cosigned {
			if got == want {
				break
			}
		}
		out = append(out, time.Since(start))
	}
	return out
}

func pct(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}

// BenchmarkWitnessRoundTrip is issue 28's "witness round trip per
// checkpoint": sign → cosigned recorded against transparency-dev's
// omniwitness on loopback (its sqlite store, its proof checking), beside
// the same round trip to the in-process test witness (baseline: no
// process, no sqlite), interleaved in the same run. It reports p50 and
// p99 of each and the ratio of the p50s.
func BenchmarkWitnessRoundTrip(b *testing.B) {
	lg := openLog(b, b.TempDir())
	ow := omniwitnesstest.Start(b, lg.verifier().Name(), lg.verifier().String())
	tw := newTestWitness(b, lg.verifier())
	srv := httptest.NewServer(tw)
	defer srv.Close()
	// The in-process witness starts at the omniwitness's size: the first
	// round trip to each is a first cosignature (old 0).
	var omni, base []time.Duration
	n := max(b.N, 20)
	b.ResetTimer()
	for i := 0; i < n; i += 10 {
		omni = append(omni, roundTrips(b, lg, ow.URL, ow.VKey, 5)...)
		base = append(base, roundTrips(b, lg, srv.URL, tw.vkey, 5)...)
	}
	b.StopTimer()
	b.ReportMetric(float64(pct(omni, 50).Microseconds())/1000, "omni-p50-ms")
	b.ReportMetric(float64(pct(omni, 99).Microseconds())/1000, "omni-p99-ms")
	b.ReportMetric(float64(pct(base, 50).Microseconds())/1000, "inproc-p50-ms")
	b.ReportMetric(float64(pct(base, 99).Microseconds())/1000, "inproc-p99-ms")
	b.ReportMetric(float64(pct(omni, 50))/float64(pct(base, 50)), "p50-ratio")
}
