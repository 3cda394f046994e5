package telemetry_test

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/telemetry"
)

const h64 = "0000000000000000000000000000000000000000000000000000000000000001"

// turnRecords are one turn of session s: a message, a model call, a tool
// call Shield blocks, the answer; args is the tool call's arguments.
func turnRecords(s, msg, args string) []ledger.Record {
	call := "call_" + msg
	return []ledger.Record{
		event.MustRecord(s, &event.SessionCreated{Mode: "normal", Title: "t"}),
		event.MustRecord(s, &event.ClientMessage{MessageID: msg, Content: "hi " + args, Client: "test"}),
		event.MustRecord(s, &event.LLMRequest{RequestID: "r" + msg, MessageID: msg, Provider: "scripted", Model: "m1", Blob: ledger.Sum([]byte("x")).String(), Size: 1}, []byte("x")),
		event.MustRecord(s, &event.LLMResponse{RequestID: "r" + msg, Provider: "scripted", Model: "m1", Blob: ledger.Sum([]byte("x")).String(), Size: 1,
			Status: 200, Attempts: 1, FinishReason: "tool_calls", Text: args, Usage: event.Usage{InputTokens: 10, OutputTokens: 2, TotalTokens: 12}}, []byte("x")),
		event.MustRecord(s, &event.ToolProposed{MessageID: msg, CallID: call, Tool: "read_file" + args, Arguments: `{"path":"x"}`, ActionHash: h64}),
		event.MustRecord(s, &event.ShieldVerdict{CallID: call, Decision: event.Block, Tier: 1, Rule: "rule" + args, Reason: "reason" + args, ActionHash: h64, PolicyHash: h64}),
		event.MustRecord(s, &event.ToolResult{CallID: call, Content: "blocked", Size: 7, IsError: true}),
		event.MustRecord(s, &event.ResponseComplete{MessageID: msg, Content: "done " + args, Thoughts: []event.Thought{}}),
	}
}

func newLedger(t *testing.T) *ledger.Ledger {
	t.Helper()
	l, err := ledger.Create(filepath.Join(t.TempDir(), "l.db"), ledger.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// deadPort is a loopback port nothing listens on.
func deadPort(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()
	return addr
}

// TestLive_DownCollector_NeverBlocks: with a collector that is down, the
// ledger's appends go on at their own pace, the exporter counts the
// spans it could not send and says why, and Close returns within its
// drain.
func TestLive_DownCollector_NeverBlocks(t *testing.T) {
	l := newLedger(t)
	lv, err := telemetry.StartLive(context.Background(), l, telemetry.LiveConfig{
		Endpoint: telemetry.Endpoint{URL: deadPort(t), Insecure: true, Timeout: 500 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		start := time.Now()
		if _, err := l.Append(context.Background(), ledger.Sync, turnRecords("ses_down", "m"+string(rune('a'+i%26))+string(rune('a'+i/26)), "")...); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("an append took %v with the collector down", d)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for lv.Status().Failed == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no failure counted: %+v", lv.Status())
		}
		time.Sleep(20 * time.Millisecond) // polling a condition with a deadline
	}
	st := lv.Status()
	if st.LastError == "" || st.Exported != 0 || st.ReadSeq == 0 {
		t.Errorf("status %+v", st)
	}
	start := time.Now()
	lv.Close(time.Second) // the drain's error (the collector is down) is expected
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Close took %v", d)
	}
}

// TestLive_MatchesExport: the spans the live exporter sends as entries
// become durable are those an export of the same ledger sends: same ids,
// names, parents and times (Jaeger receives both).
func TestLive_MatchesExport(t *testing.T) {
	j := startJaeger(t)
	l := newLedger(t)
	lv, err := telemetry.StartLive(context.Background(), l, telemetry.LiveConfig{Endpoint: telemetry.Endpoint{URL: j.OTLPGRPC, Insecure: true}})
	if err != nil {
		t.Fatal(err)
	}
	app, err := l.Append(context.Background(), ledger.Sync, turnRecords("ses_live", "m1", "")...)
	if err != nil {
		t.Fatal(err)
	}
	traceID := telemetry.TraceID(l.ID(), "ses_live", app[1].Seq).String()
	live := j.WaitTrace(t, traceID, 3, 30*time.Second)
	if err := lv.Close(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	mem := exportMem(t, l, telemetry.ExportOptions{})
	if len(mem) != len(live.Spans) {
		t.Fatalf("live sent %d spans, an export %d", len(live.Spans), len(mem))
	}
	for _, s := range mem {
		found := false
		for _, js := range live.Spans {
			if js.SpanID == s.SpanContext.SpanID().String() && js.OperationName == s.Name && js.StartTime == s.StartTime.UnixMicro() &&
				js.Parent() == parentOrEmpty(s) {
				found = true
			}
		}
		if !found {
			t.Errorf("exported span %s %s has no live twin in %+v", s.Name, s.SpanContext.SpanID(), live.Spans)
		}
	}
}

func parentOrEmpty(s tracetest.SpanStub) string {
	if !s.Parent.IsValid() {
		return ""
	}
	return s.Parent.SpanID().String()
}

// TestExport_HostileContent_Bounded: recorded values of megabytes, with
// control characters, bidi overrides and invalid UTF-8, become bounded,
// clean attributes (content on, the worst case).
func TestExport_HostileContent_Bounded(t *testing.T) {
	l := newLedger(t)
	hostile := strings.Repeat("A\x1b[31m\u202e\r\nB\xff", 80000) // ~0.6 MB
	if _, err := l.Append(context.Background(), ledger.Sync, turnRecords("ses_hostile", "m1", hostile)...); err != nil {
		t.Fatal(err)
	}
	spans := exportMem(t, l, telemetry.ExportOptions{Content: true})
	if len(spans) != 3 {
		t.Fatalf("%d spans", len(spans))
	}
	check := func(where, k, v string) {
		if len(v) > telemetry.MaxContent+64 {
			t.Errorf("%s %s: %d bytes", where, k, len(v))
		}
		if !utf8.ValidString(v) || strings.ContainsAny(v, "\x1b\r\u202e") {
			t.Errorf("%s %s holds control characters or invalid UTF-8: %q", where, k, v[:min(len(v), 80)])
		}
	}
	for _, s := range spans {
		check(s.Name, "name", s.Name)
		for _, kv := range s.Attributes {
			check(s.Name, string(kv.Key), kv.Value.Emit())
		}
		for _, ev := range s.Events {
			for _, kv := range ev.Attributes {
				check(s.Name+"/"+ev.Name, string(kv.Key), kv.Value.Emit())
			}
		}
	}
}

// TestMapper_ManyOpen_Bounded: calls that never end (a hostile or cut
// ledger) hold at most MaxOpen spans; the rest end at once, counted.
func TestMapper_ManyOpen_Bounded(t *testing.T) {
	l := newLedger(t)
	recs := []ledger.Record{event.MustRecord("ses_open", &event.ClientMessage{MessageID: "m", Content: "x"})}
	for i := range 200 {
		recs = append(recs, event.MustRecord("ses_open", &event.ToolProposed{MessageID: "m", CallID: "c" + strings.Repeat("x", i), Tool: "read_file", Arguments: "{}", ActionHash: h64}))
	}
	if _, err := l.Append(context.Background(), ledger.Sync, recs...); err != nil {
		t.Fatal(err)
	}
	mem := tracetest.NewInMemoryExporter()
	tp := telemetry.NewProvider(mem, telemetry.ProviderOptions{Block: true})
	m := telemetry.NewMapper(tp.Tracer(telemetry.Tracer), telemetry.Options{LedgerID: l.ID(), MaxOpen: 10})
	if err := l.Range(0, ^uint64(0), func(e ledger.Entry) error { m.Apply(e); return nil }); err != nil {
		t.Fatal(err)
	}
	if m.Spans != 201 || m.Truncated != 191 {
		t.Errorf("spans %d, truncated %d; want 201 and 191", m.Spans, m.Truncated)
	}
	m.Flush()
	if err := tp.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(mem.GetSpans()); n != 201 {
		t.Errorf("%d spans sent, want 201 (every one ended)", n)
	}
}
