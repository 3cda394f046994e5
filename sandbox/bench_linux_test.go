package sandbox_test

// What the sandbox and its canary add to an agent's start:
//
//	go test -run '^$' -bench SandboxStart -benchtime 30x ./sandbox/
//
// One iteration starts two children from this test binary, both as the
// engine starts the agent (StartUnprivileged): one that applies the
// agent's sandbox and runs the four canary probes before saying "ready",
// and the same start without them.

import (
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/opx-dev/opx/sandbox"
)

func BenchmarkSandboxStart(b *testing.B) {
	if !newAvailable() {
		b.Skip("no kernel sandbox")
	}
	c, _ := plant(b)
	median := func(d []time.Duration) time.Duration {
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		return d[len(d)/2]
	}
	run := func(mode string) time.Duration {
		cmd := child(b, mode, c)
		var out strings.Builder
		cmd.Stdout = &out
		t0 := time.Now()
		// Started as the engine starts the agent (without capabilities).
		err := sandbox.StartUnprivileged(cmd)
		if err == nil {
			err = cmd.Wait()
		}
		if err != nil || out.Len() == 0 {
			b.Fatalf("%s child: %v", mode, err)
		}
		return time.Since(t0)
	}
	var plain, sandboxed []time.Duration
	for i := 0; i < b.N; i++ {
		plain = append(plain, run("canary-skip"))
		sandboxed = append(sandboxed, run("canary"))
	}
	p, s := median(plain), median(sandboxed)
	b.ReportMetric(float64(p.Microseconds())/1000, "plain-ms")
	b.ReportMetric(float64(s.Microseconds())/1000, "sandboxed-ms")
	b.ReportMetric(float64((s-p).Microseconds())/1000, "added-ms")
}
