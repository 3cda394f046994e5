package telemetry_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opx-dev/opx/internal/jaegertest"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/replay"
	"github.com/opx-dev/opx/telemetry"
)

var (
	jaegerMu  sync.Mutex
	jaegerRun *jaegertest.Jaeger
)

// startJaeger runs one Jaeger for the whole test binary (TestMain stops
// it): tests export traces of their own ids, so they share it.
func startJaeger(t *testing.T) *jaegertest.Jaeger {
	t.Helper()
	jaegerMu.Lock()
	defer jaegerMu.Unlock()
	if jaegerRun == nil {
		dir, err := mkdirTemp()
		if err != nil {
			t.Fatal(err)
		}
		jaegerRun = jaegertest.Start(t, dir)
	}
	return jaegerRun
}

func stopJaeger() {
	jaegerMu.Lock()
	defer jaegerMu.Unlock()
	jaegerRun.Stop()
}

// TestExport_Jaeger_SampleSession sends the sample's prompt-injection
// session to a real Jaeger v2 over OTLP/gRPC and reads it back through
// Jaeger's query API: the turn's invoke_agent span at the root, the chat
// and execute_tool spans under it, the GenAI attributes, and each blocked
// call naming the seq and hash of the verdict that blocked it, as the
// ledger holds them. Then the same over OTLP/HTTP: the same spans.
func TestExport_Jaeger_SampleSession(t *testing.T) {
	j := startJaeger(t)
	l := openSample(t)
	session := sessionTitled(t, l, "Follow the README setup")
	tl, err := replay.Build(l, session, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	send := func(ep telemetry.Endpoint) telemetry.Stats {
		exp, err := telemetry.NewExporter(context.Background(), ep)
		if err != nil {
			t.Fatal(err)
		}
		c := &telemetry.Counting{SpanExporter: exp}
		tp := telemetry.NewProvider(c, telemetry.ProviderOptions{Block: true})
		st, err := telemetry.Export(context.Background(), l, tp, telemetry.ExportOptions{Session: session})
		if err != nil {
			t.Fatal(err)
		}
		if err := tp.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		if c.Failed.Load() != 0 || c.Exported.Load() != st.Spans {
			msg, _ := c.LastError()
			t.Fatalf("exported %d of %d spans, %d failed: %s", c.Exported.Load(), st.Spans, c.Failed.Load(), msg)
		}
		return st
	}
	st := send(telemetry.Endpoint{URL: j.OTLPGRPC, Insecure: true})
	turn := tl.Turns[0]
	traceID := telemetry.TraceID(l.ID(), session, turn.Seq).String()
	tr := j.WaitTrace(t, traceID, int(st.Spans), 30*time.Second)
	if len(tr.Spans) != int(st.Spans) {
		t.Fatalf("jaeger holds %d spans, %d were sent", len(tr.Spans), st.Spans)
	}
	rootID := telemetry.SpanID(l.ID(), session, turn.Seq).String()
	byOp := map[string]int{}
	var root *jaegertest.Span
	for i := range tr.Spans {
		s := &tr.Spans[i]
		byOp[strings.Fields(s.OperationName)[0]]++
		if s.SpanID == rootID {
			root = s
			continue
		}
		if s.Parent() != rootID {
			t.Errorf("%s %s: parent %q, want the turn %s", s.OperationName, s.SpanID, s.Parent(), rootID)
		}
		checkJaegerLedger(t, l, s.OperationName, s.Tags)
		for _, lg := range s.Logs {
			checkJaegerLedger(t, l, s.OperationName+" event", lg.Fields)
		}
		if jaegertest.Tag(s.Tags, "gen_ai.conversation.id") != session {
			t.Errorf("%s: gen_ai.conversation.id %q", s.OperationName, jaegertest.Tag(s.Tags, "gen_ai.conversation.id"))
		}
	}
	if root == nil || root.Parent() != "" || jaegertest.Tag(root.Tags, "gen_ai.operation.name") != "invoke_agent" {
		t.Fatalf("no root invoke_agent span %s in %v", rootID, byOp)
	}
	if p := tr.Processes[root.ProcessID]; p.ServiceName != "opx" {
		t.Errorf("service %q", p.ServiceName)
	}
	if byOp["chat"] != tl.Totals.ModelCalls || byOp["execute_tool"] != tl.Totals.ToolCalls {
		t.Errorf("operations %v, want %d chat and %d execute_tool", byOp, tl.Totals.ModelCalls, tl.Totals.ToolCalls)
	}
	// The original timestamps: the turn starts at its client.message.
	e, err := l.Get(turn.Seq)
	if err != nil {
		t.Fatal(err)
	}
	if ts, _ := e.Time(); root.StartTime != ts.UnixMicro() {
		t.Errorf("turn starts at %d µs, the ledger says %d", root.StartTime, ts.UnixMicro())
	}
	blocked := 0
	for _, tc := range tl.Blocked() {
		var span *jaegertest.Span
		for i := range tr.Spans {
			if jaegertest.Tag(tr.Spans[i].Tags, "gen_ai.tool.call.id") == tc.CallID {
				span = &tr.Spans[i]
			}
		}
		if span == nil {
			t.Errorf("blocked call %s: no span", tc.CallID)
			continue
		}
		blocked++
		v, err := l.Get(tc.BlockedBy.Seq)
		if err != nil {
			t.Fatal(err)
		}
		if got := jaegertest.Tag(span.Tags, "opx.blocked.seq"); got != strconv.FormatUint(tc.BlockedBy.Seq, 10) {
			t.Errorf("%s: opx.blocked.seq %s, want %d", tc.CallID, got, tc.BlockedBy.Seq)
		}
		if got := jaegertest.Tag(span.Tags, "opx.blocked.hash"); got != v.Hash().String() {
			t.Errorf("%s: opx.blocked.hash %s, want %s", tc.CallID, got, v.Hash())
		}
		if jaegertest.Tag(span.Tags, "opx.enforced") != "blocked" || jaegertest.Tag(span.Tags, "error.type") != "opx.blocked" ||
			jaegertest.Tag(span.Tags, "gen_ai.tool.name") != tc.Tool {
			t.Errorf("%s: tags %v", tc.CallID, span.Tags)
		}
		// The verdict that blocked it is an event of the span: what
		// Shield judged, with its rule and the policy's hash.
		found := false
		for _, lg := range span.Logs {
			if jaegertest.Tag(lg.Fields, "event") == "opx.shield.verdict" && jaegertest.Tag(lg.Fields, "opx.ledger.seq") == strconv.FormatUint(tc.BlockedBy.Seq, 10) {
				found = jaegertest.Tag(lg.Fields, "opx.shield.decision") == "block" && jaegertest.Tag(lg.Fields, "opx.shield.rule") == tc.BlockedBy.Rule &&
					jaegertest.Tag(lg.Fields, "opx.shield.policy_hash") == tc.BlockedBy.PolicyHash
			}
		}
		if !found {
			t.Errorf("%s: no verdict event for seq %d in %v", tc.CallID, tc.BlockedBy.Seq, span.Logs)
		}
	}
	if blocked == 0 {
		t.Fatal("the sample session has no blocked call")
	}
	for i := range tr.Spans {
		if s := tr.Spans[i]; s.OperationName != "" && strings.HasPrefix(s.OperationName, "chat") {
			if jaegertest.Tag(s.Tags, "gen_ai.provider.name") == "" || jaegertest.Tag(s.Tags, "gen_ai.request.model") == "" ||
				jaegertest.Tag(s.Tags, "gen_ai.usage.input_tokens") == "" {
				t.Errorf("chat span without provider, model or usage: %v", s.Tags)
			}
		}
	}

	// Again over OTLP/HTTP: the collector accepts every span (send
	// checks it), and they are the same spans: the same ids, so the trace
	// holds no new one (Jaeger keeps one copy of each).
	send(telemetry.Endpoint{URL: j.OTLPHTTP, Protocol: "http"})
	tr2 := j.WaitTrace(t, traceID, len(tr.Spans), 30*time.Second)
	ids := map[string]bool{}
	for _, s := range tr.Spans {
		ids[s.SpanID] = true
	}
	for _, s := range tr2.Spans {
		if !ids[s.SpanID] {
			t.Errorf("after a second export the trace has a new span %s %s", s.SpanID, s.OperationName)
		}
	}
}

// checkJaegerLedger checks that tags name an entry of l by seq and hash.
func checkJaegerLedger(t *testing.T, l *ledger.Ledger, what string, tags []jaegertest.KV) {
	t.Helper()
	seq, err := strconv.ParseUint(jaegertest.Tag(tags, "opx.ledger.seq"), 10, 64)
	if err != nil || jaegertest.Tag(tags, "opx.ledger.id") != l.ID() {
		t.Errorf("%s: no opx.ledger.id/seq in %v", what, tags)
		return
	}
	e, err := l.Get(seq)
	if err != nil || e.Hash().String() != jaegertest.Tag(tags, "opx.ledger.hash") {
		t.Errorf("%s: seq %d hash %s does not match the ledger (%v)", what, seq, jaegertest.Tag(tags, "opx.ledger.hash"), err)
	}
}
