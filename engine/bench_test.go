package engine_test

// Benchmarks of the engine's hot path, each beside its baselines in the
// same run (the machine is shared; absolute times drift):
//
//	go test -run '^$' -bench ToolCallRoundTrip -benchtime 2000x ./engine/
//
// One b.N iteration is one tool call: the agent proposes read_file, the
// engine records the proposal and verdict, fsyncs them with exec.started,
// reads the file, fsyncs exec.completed, records and delivers the result.

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/opx-dev/opx/engine"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// echoAgentService answers every AgentEvent with a ToolResult: the bare
// gRPC round trip over the same stream type, with no engine behind it.
type echoAgentService struct {
	opxv1.UnimplementedAgentServiceServer
}

func (echoAgentService) RunSession(s opxv1.AgentService_RunSessionServer) error {
	for {
		ev, err := s.Recv()
		if err != nil {
			return nil
		}
		tc := ev.GetToolCall()
		if tc == nil {
			continue
		}
		if err := s.Send(&opxv1.EngineDirective{Directive: &opxv1.EngineDirective_ToolResult{ToolResult: &opxv1.ToolResultDelivery{CallId: tc.CallId, Content: "# demo\n"}}}); err != nil {
			return err
		}
	}
}

func percentile(d []time.Duration, p float64) time.Duration {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return d[int(float64(len(d)-1)*p)]
}

func BenchmarkToolCallRoundTrip(b *testing.B) {
	n := b.N
	// Baseline 1: one fsync of an entry-sized append, in the same directory
	// kind (a temp dir on the same disk).
	f, err := os.Create(filepath.Join(b.TempDir(), "fsync"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 470)
	fsyncs := make([]time.Duration, 0, n)
	for i := 0; i < n; i++ {
		t0 := time.Now()
		f.Write(buf)
		f.Sync()
		fsyncs = append(fsyncs, time.Since(t0))
	}

	// Baseline 2: a bare gRPC round trip on the agent stream.
	lis, _ := net.Listen("tcp", "127.0.0.1:0")
	srv := grpc.NewServer()
	opxv1.RegisterAgentServiceServer(srv, echoAgentService{})
	go srv.Serve(lis)
	defer srv.Stop()
	conn, _ := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	defer conn.Close()
	es, err := opxv1.NewAgentServiceClient(conn).RunSession(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	echo := make([]time.Duration, 0, n)
	for i := 0; i < n; i++ {
		t0 := time.Now()
		es.Send(&opxv1.AgentEvent{Event: &opxv1.AgentEvent_ToolCall{ToolCall: &opxv1.ToolCallProposed{CallId: "c", ToolName: "read_file", ArgumentsJson: `{"path":"README.md"}`, MessageId: "m"}}})
		if _, err := es.Recv(); err != nil {
			b.Fatal(err)
		}
		echo = append(echo, time.Since(t0))
	}

	// Ours: the engine, with a real fsyncing ledger.
	r := startEngine(b, func(o *engine.Options) { o.MaxToolCalls = n + 1 })
	agent := r.connectAgent(b, <-r.tokens)
	c := opxv1.NewClientServiceClient(r.conn)
	s, err := c.SendMessage(r.ctx, &opxv1.ClientMessageRequest{Content: "benchmark"})
	if err != nil {
		b.Fatal(err)
	}
	go func() {
		for {
			if _, err := s.Recv(); err != nil {
				return
			}
		}
	}()
	d, err := agent.Recv()
	if err != nil {
		b.Fatal(err)
	}
	msg := d.GetProcessRequest().MessageId
	ours := make([]time.Duration, 0, n)
	b.ResetTimer()
	for i := 0; i < n; i++ {
		id := "call_" + strconv.Itoa(i)
		t0 := time.Now()
		agent.Send(&opxv1.AgentEvent{Event: &opxv1.AgentEvent_ToolCall{ToolCall: &opxv1.ToolCallProposed{CallId: id, ToolName: "read_file", ArgumentsJson: `{"path":"README.md"}`, MessageId: msg}}})
		res, err := agent.Recv()
		if err != nil || res.GetToolResult().GetCallId() != id || res.GetToolResult().GetIsError() {
			b.Fatalf("tool call %d: %v %v", i, res, err)
		}
		ours = append(ours, time.Since(t0))
	}
	b.StopTimer()
	agent.Send(&opxv1.AgentEvent{Event: &opxv1.AgentEvent_ResponseComplete{ResponseComplete: &opxv1.AgentResponseComplete{MessageId: msg, Content: "done"}}})

	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(percentile(ours, 0.5)), "p50-ms")
	b.ReportMetric(ms(percentile(ours, 0.99)), "p99-ms")
	b.ReportMetric(ms(percentile(echo, 0.5)), "echo-p50-ms")
	b.ReportMetric(ms(percentile(echo, 0.99)), "echo-p99-ms")
	b.ReportMetric(ms(percentile(fsyncs, 0.5)), "fsync-p50-ms")
	b.ReportMetric(ms(percentile(ours, 0.5)-percentile(fsyncs, 0.5)), "p50-over-fsync-ms")
}
