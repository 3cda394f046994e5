package cli_test

// Export throughput of `opx ledger export --format otlp` (to a real
// OTLP/gRPC receiver on loopback that counts and discards) beside
// `opx ledger export -o FILE` (JSONL, the baseline) of the same ledger,
// in the same run:
//
//	go test ./cli -run '^$' -bench LedgerExportOTLP -benchtime 1x
//
// The ledger is benchLedger's (1,000,000 engine-shaped entries by
// default, cached in $TMPDIR; -exportbench.entries for another size).

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"net"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"

	"github.com/opx-dev/opx/cli"
)

var exportBenchEntries = flag.Int("exportbench.entries", 1000000, "entries in the export benchmark's ledger")

// countingReceiver is a real OTLP/gRPC trace receiver that counts spans.
type countingReceiver struct {
	collectortrace.UnimplementedTraceServiceServer
	spans atomic.Int64
}

func (s *countingReceiver) Export(_ context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			s.spans.Add(int64(len(ss.Spans)))
		}
	}
	return &collectortrace.ExportTraceServiceResponse{}, nil
}

// BenchmarkLedgerExportOTLP: one b.N iteration is one OTLP export and
// one JSONL export of the whole ledger, alternating which goes first.
// Reports entries/s of each and their ratio.
func BenchmarkLedgerExportOTLP(b *testing.B) {
	path, _ := benchLedger(b, *exportBenchEntries, 50)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := grpc.NewServer(grpc.MaxRecvMsgSize(64 << 20))
	recv := &countingReceiver{}
	collectortrace.RegisterTraceServiceServer(srv, recv)
	go srv.Serve(lis)
	defer srv.Stop()
	run := func(args ...string) time.Duration {
		app := cli.NewApp()
		var out bytes.Buffer
		app.Writer, app.ErrWriter = &out, &out
		start := time.Now()
		err := app.Run(append([]string{"opx", "ledger", "export", "--ledger", path}, args...))
		d := time.Since(start)
		if err != nil {
			b.Fatalf("export %v: %v\n%s", args, err, out.String())
		}
		return d
	}
	dir := b.TempDir()
	n := 0
	jsonl := func() time.Duration {
		n++
		return run("-o", filepath.Join(dir, fmt.Sprintf("export-%d.jsonl", n)))
	}
	otlp := func() time.Duration {
		before := recv.spans.Load()
		d := run("--format", "otlp", "--endpoint", lis.Addr().String(), "--insecure")
		if recv.spans.Load() == before {
			b.Fatal("the receiver got no span")
		}
		return d
	}
	var tj, to time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%2 == 0 {
			to += otlp()
			tj += jsonl()
		} else {
			tj += jsonl()
			to += otlp()
		}
	}
	b.StopTimer()
	entries := float64(*exportBenchEntries) * float64(b.N)
	b.ReportMetric(entries/to.Seconds(), "otlp-entries/s")
	b.ReportMetric(entries/tj.Seconds(), "jsonl-entries/s")
	b.ReportMetric(tj.Seconds()/to.Seconds(), "otlp/jsonl-throughput")
	b.ReportMetric(float64(recv.spans.Load())/float64(b.N), "spans")
}
