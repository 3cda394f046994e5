package engine_test

import (
	"context"
	"net"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"

	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/engine/outward"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"github.com/opx-dev/opx/telemetry"
)

// otlpSink is a real OTLP/gRPC trace receiver on loopback that counts
// the spans it is sent and keeps nothing.
type otlpSink struct {
	collectortrace.UnimplementedTraceServiceServer
	spans atomic.Int64
}

func (s *otlpSink) Export(_ context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			s.spans.Add(int64(len(ss.Spans)))
		}
	}
	return &collectortrace.ExportTraceServiceResponse{}, nil
}

func startSink(b testing.TB) (*otlpSink, string) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := grpc.NewServer()
	sink := &otlpSink{}
	collectortrace.RegisterTraceServiceServer(srv, sink)
	go srv.Serve(lis)
	b.Cleanup(srv.Stop)
	return sink, lis.Addr().String()
}

// liveTelemetry is the engine option that exports its ledger to endpoint
// as the cli wires it (telemetry.Live behind outward.Telemetry).
func liveTelemetry(endpoint string) func(*engine.Options) {
	return func(o *engine.Options) {
		l := o.Ledger
		o.Telemetry = func(ctx context.Context) (outward.Telemetry, error) {
			lv, err := telemetry.StartLive(ctx, l, telemetry.LiveConfig{Endpoint: telemetry.Endpoint{URL: endpoint, Insecure: true}})
			if err != nil {
				return nil, err
			}
			return liveStatus{lv}, nil
		}
	}
}

type liveStatus struct{ lv *telemetry.Live }

func (l liveStatus) Close(d time.Duration) error { return l.lv.Close(d) }
func (l liveStatus) Status() *opxv1.TelemetryStatus {
	st := l.lv.Status()
	return &opxv1.TelemetryStatus{Spans: st.Spans, Exported: st.Exported, Failed: st.Failed, ReadSeq: st.ReadSeq}
}

// toolLoop is one engine with an agent connected, a message open, and a
// way to time read_file round trips through the whole pipeline.
type toolLoop struct {
	agent opxv1.AgentService_RunSessionClient
	msg   string
	next  int
}

func newToolLoop(b *testing.B, r *running) *toolLoop {
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
	return &toolLoop{agent: agent, msg: d.GetProcessRequest().MessageId}
}

func (t *toolLoop) call(b *testing.B) time.Duration {
	id := "call_" + strconv.Itoa(t.next)
	t.next++
	t0 := time.Now()
	t.agent.Send(&opxv1.AgentEvent{Event: &opxv1.AgentEvent_ToolCall{ToolCall: &opxv1.ToolCallProposed{CallId: id, ToolName: "read_file", ArgumentsJson: `{"path":"README.md"}`, MessageId: t.msg}}})
	res, err := t.agent.Recv()
	if err != nil || res.GetToolResult().GetCallId() != id || res.GetToolResult().GetIsError() {
		b.Fatalf("tool call %s: %v %v", id, res, err)
	}
	return time.Since(t0)
}

// BenchmarkToolCallRoundTrip_Telemetry is BenchmarkToolCallRoundTrip
// with the live OTLP export on (to a real OTLP/gRPC receiver on
// loopback) beside the same engine with it off, in the same run: the
// calls alternate between the two engines, so both see the same machine.
// It reports both medians and their ratio (the target: at most 1.05).
func BenchmarkToolCallRoundTrip_Telemetry(b *testing.B) {
	sink, addr := startSink(b)
	n := b.N
	off := startEngine(b, func(o *engine.Options) { o.MaxToolCalls = n + 1 })
	on := startEngine(b, func(o *engine.Options) { o.MaxToolCalls = n + 1 }, liveTelemetry(addr))
	lOff, lOn := newToolLoop(b, off), newToolLoop(b, on)
	offs := make([]time.Duration, 0, n)
	ons := make([]time.Duration, 0, n)
	b.ResetTimer()
	for i := 0; i < n; i++ {
		if i%2 == 0 {
			offs = append(offs, lOff.call(b))
			ons = append(ons, lOn.call(b))
		} else {
			ons = append(ons, lOn.call(b))
			offs = append(offs, lOff.call(b))
		}
	}
	b.StopTimer()
	for _, l := range []*toolLoop{lOff, lOn} {
		l.agent.Send(&opxv1.AgentEvent{Event: &opxv1.AgentEvent_ResponseComplete{ResponseComplete: &opxv1.AgentResponseComplete{MessageId: l.msg, Content: "done"}}})
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	pOff, pOn := percentile(offs, 0.5), percentile(ons, 0.5)
	b.ReportMetric(ms(pOff), "off-p50-ms")
	b.ReportMetric(ms(pOn), "on-p50-ms")
	b.ReportMetric(ms(percentile(offs, 0.99)), "off-p99-ms")
	b.ReportMetric(ms(percentile(ons, 0.99)), "on-p99-ms")
	b.ReportMetric(float64(pOn)/float64(pOff), "on/off-p50")
	// The export ran: spans reached the receiver (the live exporter
	// flushes every second; the engine's stop drains the rest).
	st, err := opxv1.NewClientServiceClient(on.conn).GetStatus(on.ctx, &opxv1.StatusRequest{})
	if err != nil || st.Telemetry == nil {
		b.Fatalf("status: %v %v", st, err)
	}
	b.ReportMetric(float64(st.Telemetry.Spans), "spans-ended")
	_ = sink
}
