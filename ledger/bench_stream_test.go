package ledger_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/opx-dev/opx/ledger"
)

// BenchmarkVerifyExport: VerifyExport (the stream verifier behind `opx
// ledger verify EXPORT`) of the large ledger's JSONL export, default and
// strict, in entries/s.
func BenchmarkVerifyExport(b *testing.B) {
	s := benchLarge(b)
	for _, strict := range []bool{false, true} {
		name := "mode=default"
		if strict {
			name = "mode=strict"
		}
		b.Run(name, func(b *testing.B) {
			var d time.Duration
			for r := 0; r < b.N; r++ {
				start := time.Now()
				rep, _, err := ledger.VerifyExport(s.jsonl, ledger.VerifyOptions{Strict: strict})
				d += time.Since(start)
				if err != nil || !rep.OK || rep.Entries != uint64(s.entries) {
					b.Fatalf("verify: %v, %+v", err, rep)
				}
			}
			b.ReportMetric(float64(d.Nanoseconds())/float64(s.entries*b.N), "ns/op")
			b.ReportMetric(benchRate(s.entries*b.N, d), "entries/s")
		})
	}
}

// BenchmarkExportImport: Import (strict verify, then write and fsync a
// new ledger) of the large ledger's JSONL export, in entries/s.
func BenchmarkExportImport(b *testing.B) {
	s := benchLarge(b)
	var d time.Duration
	for r := 0; r < b.N; r++ {
		dst := filepath.Join(b.TempDir(), "ledger.db")
		start := time.Now()
		rep, err := ledger.Import(s.jsonl, dst, ledger.ImportOptions{})
		d += time.Since(start)
		if err != nil || rep.Entries != uint64(s.entries) {
			b.Fatalf("import: %v", err)
		}
	}
	b.ReportMetric(float64(d.Nanoseconds())/float64(s.entries*b.N), "ns/op")
	b.ReportMetric(benchRate(s.entries*b.N, d), "entries/s")
}
