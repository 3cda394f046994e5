package cli_test

import (
	"net"
	"strconv"
	"strings"
	"testing"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"

	"github.com/opx-dev/opx/cli"
)

// startReceiver runs a real OTLP/gRPC trace receiver on loopback that
// counts spans (countingReceiver, bench_export_otlp_test.go).
func startReceiver(t *testing.T) (*countingReceiver, string) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	recv := &countingReceiver{}
	collectortrace.RegisterTraceServiceServer(srv, recv)
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	return recv, lis.Addr().String()
}

// TestLedgerExport_OTLP_SendsAndRefuses: the sample ledger sent as spans
// to a real receiver, the count it got being the count printed; a bad
// command line is a usage error; a collector that is not there is an
// operational error naming it.
func TestLedgerExport_OTLP_SendsAndRefuses(t *testing.T) {
	path := replaySample(t)
	recv, addr := startReceiver(t)
	r := run(t, "ledger", "export", "--ledger", path, "--format", "otlp", "--endpoint", addr, "--insecure", "--json")
	r.wantCode(t, cli.ExitOK)
	m := r.jsonObject(t)
	if got := m["exported"]; got == nil || got.(interface{ String() string }).String() == "0" {
		t.Fatalf("exported %v", m)
	}
	if n := recv.spans.Load(); n == 0 || m["spans"].(interface{ String() string }).String() != m["exported"].(interface{ String() string }).String() {
		t.Errorf("receiver got %d spans, report %v", n, m)
	}
	run(t, "ledger", "export", "--ledger", path, "--format", "otlp").wantCode(t, cli.ExitUsage)
	run(t, "ledger", "export", "--ledger", path, "--format", "otlp", "--endpoint", addr, "-o", "x.jsonl").wantCode(t, cli.ExitUsage)
	run(t, "ledger", "export", "--ledger", path, "--format", "otlp", "--endpoint", addr, "--protocol", "udp").wantCode(t, cli.ExitUsage)
	run(t, "ledger", "export", "--ledger", path, "--format", "ocsv").wantCode(t, cli.ExitUsage)
	run(t, "ledger", "export", "--ledger", path, "--format", "otlp", "--endpoint", addr, "--header", "x\r\ny=z").wantCode(t, cli.ExitUsage)
	run(t, "ledger", "export", "--ledger", path, "--format", "otlp", "--endpoint", addr, "--insecure", "--session", "ses_nope").wantCode(t, cli.ExitError)
	lis, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := lis.Addr().String()
	lis.Close()
	run(t, "ledger", "export", "--ledger", path, "--format", "otlp", "--endpoint", dead, "--insecure").wantCode(t, cli.ExitError)
}

// TestLedgerExport_OTLP_Tampered: a verdict rewritten from block to allow
// breaks the chain; the OTLP export stops there, an integrity failure
// (exit 4), rather than send spans naming hashes of a chain that does
// not link.
func TestLedgerExport_OTLP_Tampered(t *testing.T) {
	path, seq := rewrittenVerdict(t, replaySample(t), injection)
	_, addr := startReceiver(t)
	r := run(t, "ledger", "export", "--ledger", path, "--format", "otlp", "--endpoint", addr, "--insecure")
	r.wantCode(t, cli.ExitIntegrity)
	if !strings.Contains(r.stderr+r.err.Error(), strconv.FormatUint(seq+1, 10)) {
		t.Errorf("the error does not name entry %d: %v\n%s", seq+1, r.err, r.stderr)
	}
}
