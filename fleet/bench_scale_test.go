package fleet_test

import (
	"flag"
	"math"
	"testing"
	"time"
)

// BenchmarkFleetSimScale is the rule for the collector's cost
// per entry (issue 31): at one total rate, N sources and 10N sources
// (-fleet.sim-scale, two SOURCESxRATE scenarios of equal total rate,
// default 1000x1,10000x0.1) run one after the other in the same process,
// each as BenchmarkFleetSim runs it with its publishers' baseline (runs
// pub and collector), and the ratio of the collector's CPU per entry,
// the second's over the first's, is cpu_scale_ratio (1: the cost per
// entry does not depend on the sources). The collector's CPU is counted
// until every mirror holds every entry, so a cost that only moved behind
// the journal still counts.
//
//	go test -c -o /tmp/fleet.test ./fleet && cd fleet && /tmp/fleet.test -test.run '^$' \
//	    -test.bench BenchmarkFleetSimScale -test.benchtime 1x -test.v -fleet.sim-for 30s
func BenchmarkFleetSimScale(b *testing.B) {
	scens, err := parseSimScenarios(*simScale)
	if err != nil {
		b.Fatal(err)
	}
	if len(scens) != 2 {
		b.Fatalf("-fleet.sim-scale %q: want two scenarios, e.g. 1000x1,10000x0.1", *simScale)
	}
	base, scaled := scens[0], scens[1]
	if r := float64(scaled.sources) * scaled.rate / (float64(base.sources) * base.rate); math.Abs(r-1) > 0.01 {
		b.Fatalf("-fleet.sim-scale %q: the two scenarios' total rates differ (%.3g×)", *simScale, r)
	}
	if *simFor <= 0 {
		b.Fatalf("-fleet.sim-for %v: want a positive duration", *simFor)
	}
	most := max(base.sources, scaled.sources)
	entries := make([]int, most)
	total := 0
	for i := range entries {
		for _, sc := range scens {
			if i < sc.sources {
				entries[i] = max(entries[i], simWarm+int(sc.rate*simFor.Seconds()+0.999)+1)
			}
		}
		total += entries[i]
	}
	if total > maxSimEntries {
		b.Fatalf("-fleet.sim-scale and -fleet.sim-for ask for %d entries; at most %d", total, maxSimEntries)
	}
	start := time.Now()
	pool := prepareSimSources(b, simPoolDir(b), entries)
	b.Logf("prepared %d source ledgers (%d entries) in %v", len(pool), simTotal(pool), time.Since(start).Round(time.Millisecond))
	runs := []string{"pub", "collector"}
	var rb, rs simReport
	for b.Loop() {
		rb = runSimScenario(b, pool[:base.sources], base, runs)
		rs = runSimScenario(b, pool[:scaled.sources], scaled, runs)
	}
	perEntry := func(r simReport) float64 {
		if r.col == nil || r.pub == nil || r.col.entries == 0 {
			b.Fatalf("%s: no measure", r.sc)
		}
		return float64((r.col.cpu - r.pub.cpu).Microseconds()) / float64(r.col.entries)
	}
	pb, ps := perEntry(rb), perEntry(rs)
	b.Logf("%s: %.1f µs/entry (mirrors p50 %v p99 %v); %s: %.1f µs/entry (mirrors p50 %v p99 %v); ratio %.2f",
		base, pb, rb.col.mat.p50.Round(time.Millisecond), rb.col.mat.p99.Round(time.Millisecond),
		scaled, ps, rs.col.mat.p50.Round(time.Millisecond), rs.col.mat.p99.Round(time.Millisecond), ps/pb)
	b.ReportMetric(pb, "base_cpu_us/entry")
	b.ReportMetric(ps, "scaled_cpu_us/entry")
	b.ReportMetric(ps/pb, "cpu_scale_ratio")
	b.ReportMetric(float64(rb.col.lag.p99.Microseconds())/1000, "base_p99_ms")
	b.ReportMetric(float64(rs.col.lag.p99.Microseconds())/1000, "scaled_p99_ms")
	b.ReportMetric(float64(rb.col.mat.p99.Microseconds())/1000, "base_mat_p99_ms")
	b.ReportMetric(float64(rs.col.mat.p99.Microseconds())/1000, "scaled_mat_p99_ms")
}

var simScale = flag.String("fleet.sim-scale", "1000x1,10000x0.1", "BenchmarkFleetSimScale's two scenarios of one total rate: N and more sources (SOURCESxRATE,SOURCESxRATE)")
