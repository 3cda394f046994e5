package cli_test

// Export throughput of OCSF events beside the JSONL export of the same
// ledger, in the same run (issue 30, section 3):
//
//	go test ./cli -run '^$' -bench ExportOCSF -benchtime 1x
//
// The ledger is the review benchmark's (bench_review_test.go, cached in
// $TMPDIR/opx-review-bench-v1-<n>/): engine-shaped turns of 12 entries
// (a model call, a tool call with its verdicts, snapshot and execution),
// a signed checkpoint every 1000 entries, 1,000,000 entries by default
// (-ocsfbench.entries=N for another size).

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/opx-dev/opx/cli"
)

var ocsfBenchEntries = flag.Int("ocsfbench.entries", 1000000, "entries in the OCSF export benchmark's ledger")

// BenchmarkExportOCSF: `opx ledger export --format ocsf -o FILE` against
// `opx ledger export -o FILE` (JSONL, the entries verbatim with their
// blob bundle), alternating which goes first; one b.N iteration is one
// of each. Reports entries/s of each and the ratio (OCSF/JSONL time).
func BenchmarkExportOCSF(b *testing.B) {
	path, _ := benchLedger(b, *ocsfBenchEntries, 50)
	export := func(args ...string) (time.Duration, int64) {
		dir := b.TempDir()
		out := filepath.Join(dir, "out.jsonl")
		app := cli.NewApp()
		var msg bytes.Buffer
		app.Writer, app.ErrWriter = &msg, &msg
		start := time.Now()
		err := app.Run(append([]string{"opx", "ledger", "export", "--ledger", path, "-o", out}, args...))
		d := time.Since(start)
		if err != nil {
			b.Fatalf("export %v: %v\n%s", args, err, msg.String())
		}
		fi, err := os.Stat(out)
		if err != nil {
			b.Fatal(err)
		}
		os.RemoveAll(dir)
		return d, fi.Size()
	}
	entries := float64(*ocsfBenchEntries)
	var ocsfT, jsonlT time.Duration
	var ocsfBytes, jsonlBytes int64
	for i := 0; i < b.N; i++ {
		if i%2 == 0 {
			d, n := export("--format", "ocsf")
			ocsfT, ocsfBytes = ocsfT+d, n
			d, n = export()
			jsonlT, jsonlBytes = jsonlT+d, n
		} else {
			d, n := export()
			jsonlT, jsonlBytes = jsonlT+d, n
			d, n = export("--format", "ocsf")
			ocsfT, ocsfBytes = ocsfT+d, n
		}
	}
	b.ReportMetric(entries*float64(b.N)/ocsfT.Seconds(), "ocsf-entries/s")
	b.ReportMetric(entries*float64(b.N)/jsonlT.Seconds(), "jsonl-entries/s")
	b.ReportMetric(ocsfT.Seconds()/jsonlT.Seconds(), "ocsf/jsonl-time")
	b.ReportMetric(float64(ocsfBytes)/(1<<20), "ocsf-MiB")
	b.ReportMetric(float64(jsonlBytes)/(1<<20), "jsonl-MiB")
}
