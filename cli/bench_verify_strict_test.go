package cli_test

// Strict verification of the whole large signing ledger of the replay
// benchmark (engine-shaped turns, a signed checkpoint every 1000
// entries): `opx ledger verify --strict`, which is also what
// `opx replay --full-verify` runs, beside the hash floor of the same
// entry bytes in the same run:
//
//	go test ./cli -run '^$' -bench VerifyStrict -benchtime 1x -count 3
//
// Target (issue 24): >= 500,000 entries/s at 1,000,000 entries.

import (
	"bytes"
	"crypto/sha256"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zeebo/blake3"

	"github.com/opx-dev/opx/cli"
	"github.com/opx-dev/opx/ledger"
)

// strictHashFloor is the floor under a strict verify: every entry's
// stored bytes read from the file (one goroutine, as verify reads them)
// and hashed on all cores with BLAKE3-256 (the chain) and SHA-256 with the
// RFC 6962 leaf prefix (the tree), with no parsing and no checks. It
// returns the entries hashed.
func strictHashFloor(b *testing.B, path string) int {
	l, err := ledger.OpenReadOnly(path)
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	workers := runtime.GOMAXPROCS(0)
	chunks := make(chan [][]byte, workers*2)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := sha256.New()
			var out [32]byte
			for lines := range chunks {
				for _, ln := range lines {
					blake3.Sum256(ln)
					h.Reset()
					h.Write([]byte{0})
					h.Write(ln)
					h.Sum(out[:0])
				}
			}
		}()
	}
	n := 0
	lines := make([][]byte, 0, 4096)
	err = l.RangeRaw(0, ^uint64(0), func(_ uint64, raw []byte) error {
		lines = append(lines, raw) // valid while the read transaction runs
		n++
		if len(lines) == cap(lines) {
			chunks <- lines
			lines = make([][]byte, 0, 4096)
		}
		return nil
	})
	chunks <- lines
	close(chunks)
	wg.Wait()
	if err != nil {
		b.Fatal(err)
	}
	return n
}

// BenchmarkVerifyStrict: `opx ledger verify --strict --ledger PATH` (the
// whole command: chain, head, blobs, tree and tiles, every signed
// checkpoint against its recorded key, canonical form, every payload,
// causal order) against strictHashFloor, alternating which goes first.
// floor-ratio is the floor's time over verify's (1 would be verify at
// the speed of hashing alone), floor-cpu-ratio the same of the CPU time
// each spent (steadier on a shared machine); peak-heap-MiB is the
// largest Go heap in use seen during the verifies.
func BenchmarkVerifyStrict(b *testing.B) {
	path, _ := reviewBenchLedger(b)
	entries := strictHashFloor(b, path) // and fault the file in
	var peak uint64
	var opxCPU, floorCPU time.Duration
	verify := func() time.Duration {
		app := cli.NewApp()
		var out bytes.Buffer
		app.Writer, app.ErrWriter = &out, &out
		runtime.GC()
		stop, peaked := heapPeak()
		start, cpu := time.Now(), cpuTime()
		err := app.Run([]string{"opx", "ledger", "verify", "--strict", "--ledger", path})
		d := time.Since(start)
		opxCPU += cpuTime() - cpu
		close(stop)
		peak = max(peak, <-peaked)
		if err != nil || !strings.Contains(out.String(), "ok:") {
			b.Fatalf("verify --strict: %v\n%s", err, out.String())
		}
		return d
	}
	floor := func() time.Duration {
		start, cpu := time.Now(), cpuTime()
		if n := strictHashFloor(b, path); n != entries {
			b.Fatalf("floor hashed %d entries, then %d", entries, n)
		}
		d := time.Since(start)
		floorCPU += cpuTime() - cpu
		return d
	}
	var opxT, floorT time.Duration
	for i := 0; i < b.N; i++ {
		if i%2 == 0 {
			opxT += verify()
			floorT += floor()
		} else {
			floorT += floor()
			opxT += verify()
		}
	}
	total := float64(entries * b.N)
	b.ReportMetric(float64(opxT.Nanoseconds())/total, "ns/op")
	b.ReportMetric(total/opxT.Seconds(), "strict-entries/s")
	b.ReportMetric(total/floorT.Seconds(), "floor-entries/s")
	b.ReportMetric(floorT.Seconds()/opxT.Seconds(), "floor-ratio")
	b.ReportMetric(float64(opxCPU.Nanoseconds())/total, "strict-cpu-ns/entry")
	b.ReportMetric(float64(floorCPU.Nanoseconds())/total, "floor-cpu-ns/entry")
	b.ReportMetric(floorCPU.Seconds()/opxCPU.Seconds(), "floor-cpu-ratio")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
}

// heapPeak samples the bytes of live and not yet swept heap objects
// every 5 ms (runtime/metrics: no stop of the world, unlike
// runtime.ReadMemStats, which would slow what it measures) until stop is
// closed, then sends the largest value seen.
func heapPeak() (chan struct{}, chan uint64) {
	stop := make(chan struct{})
	peaked := make(chan uint64, 1)
	go func() {
		var top uint64
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(sample)
			top = max(top, sample[0].Value.Uint64())
			select {
			case <-stop:
				peaked <- top
				return
			case <-t.C:
			}
		}
	}()
	return stop, peaked
}

// cpuTime is the CPU time (user and system) the process has used: on a
// shared machine, where the wall time of a run depends on the neighbours,
// the CPU each side spends is the steadier figure.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
