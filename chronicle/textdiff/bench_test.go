package textdiff_test

// Benchmarks of the diff, each with its baseline run in the same
// iteration, alternating which goes first (these machines are shared and
// absolute times drift), reporting both rates and their ratio. ns/op is
// overridden to mean textdiff's time alone. Run with
//
//	go test -run '^$' -bench . -benchtime=10x ./chronicle/textdiff/
//
// Rates count the old file's lines. GNU diff's time includes starting the
// process and reading the two files, a few milliseconds.

import (
	"errors"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opx-dev/opx/chronicle/textdiff"
)

// BenchmarkUnified_100kLines10Edits diffs a 100,000-line file against a
// copy with 10 scattered edits, beside GNU "diff -u" on the same files.
func BenchmarkUnified_100kLines10Edits(b *testing.B) {
	old, new, _ := scatteredEdits(100_000, 10)
	benchVsGNU(b, old, new)
}

// BenchmarkUnified_Pathological200k diffs two unrelated 200,000-line
// files drawn from the same 8 lines, where a shortest script is costly and
// the guards decide, beside GNU "diff -u" (whose own heuristic takes
// seconds here).
func BenchmarkUnified_Pathological200k(b *testing.B) {
	rng := rand.New(rand.NewSource(3))
	old, new := randomLines(rng, 200_000, 8), randomLines(rng, 200_000, 8)
	benchVsGNU(b, []byte(old), []byte(new))
}

// BenchmarkLines_2kLines10Edits diffs a 2,000-line file with 10 scattered
// edits beside the naive O(N·M) table of the tests.
func BenchmarkLines_2kLines10Edits(b *testing.B) {
	old, new, _ := scatteredEdits(2_000, 10)
	a, c := splitLines(string(old)), splitLines(string(new))
	benchPair(b, len(a),
		func() { textdiff.Lines(old, new) },
		"naive", func() { naiveDiff(a, c) })
}

// benchVsGNU times Unified on old and new beside GNU diff on the same
// content written to files. Without GNU diff, only Unified is timed.
func benchVsGNU(b *testing.B, old, new []byte) {
	ours := func() { textdiff.Unified("old", "new", old, new, 3) }
	lines := strings.Count(string(old), "\n")
	if _, err := exec.LookPath("diff"); err != nil {
		b.Logf("no GNU diff baseline: %v", err)
		benchPair(b, lines, ours, "", nil)
		return
	}
	dir := b.TempDir()
	for name, content := range map[string][]byte{"old": old, "new": new} {
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o600); err != nil {
			b.Fatal(err)
		}
	}
	benchPair(b, lines, ours, "gnu", func() {
		cmd := exec.Command("diff", "-u", "old", "new")
		cmd.Dir = dir
		var exit *exec.ExitError
		if err := cmd.Run(); err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) {
			b.Fatalf("diff: %v", err)
		}
	})
}

// benchPair runs ours and base (if not nil) once each per iteration,
// alternating which goes first, sets ns/op to ours alone, and reports
// both rates in lines per second and how many times faster ours is.
func benchPair(b *testing.B, lines int, ours func(), baseName string, base func()) {
	var tOurs, tBase time.Duration
	b.ResetTimer()
	for i := range b.N {
		if i%2 == 0 {
			tOurs += timed(ours)
		}
		if base != nil {
			tBase += timed(base)
		}
		if i%2 == 1 {
			tOurs += timed(ours)
		}
	}
	n := float64(lines) * float64(b.N)
	b.ReportMetric(float64(tOurs.Nanoseconds())/float64(b.N), "ns/op")
	b.ReportMetric(n/tOurs.Seconds(), "lines/s")
	if base != nil {
		b.ReportMetric(n/tBase.Seconds(), baseName+"-lines/s")
		b.ReportMetric(tBase.Seconds()/tOurs.Seconds(), "x-"+baseName)
	}
}

// timed runs f and returns how long it took.
func timed(f func()) time.Duration {
	start := time.Now()
	f()
	return time.Since(start)
}

// randomLines returns n lines drawn from an alphabet of letters.
func randomLines(rng *rand.Rand, n, letters int) string {
	var b strings.Builder
	for range n {
		b.WriteByte(byte('a' + rng.Intn(letters)))
		b.WriteByte('\n')
	}
	return b.String()
}
