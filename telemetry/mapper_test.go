package telemetry_test

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/replay"
	"github.com/opx-dev/opx/telemetry"
)

var (
	sampleOnce sync.Once
	sampleDB   string
	sampleErr  error
)

// openSample imports the recorded sample ledger once per test binary and
// opens it read-only.
func openSample(t testing.TB) *ledger.Ledger {
	t.Helper()
	sampleOnce.Do(func() {
		dir, err := mkdirTemp()
		if err != nil {
			sampleErr = err
			return
		}
		sampleDB = filepath.Join(dir, "sample.db")
		_, sampleErr = ledger.Import(filepath.Join("..", "fixtures", "ledgers", "sample.jsonl.zst"), sampleDB,
			ledger.ImportOptions{Verify: event.StrictOptions()})
	})
	if sampleErr != nil {
		t.Fatal(sampleErr)
	}
	l, err := ledger.OpenReadOnly(sampleDB)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func sessionTitled(t testing.TB, l *ledger.Ledger, title string) string {
	t.Helper()
	var id string
	err := l.Range(0, ^uint64(0), func(e ledger.Entry) error {
		if e.Type == event.TypeSessionTitled && strings.Contains(string(e.Data), title) {
			id = e.Session
		}
		return nil
	})
	if err != nil || id == "" {
		t.Fatalf("no session titled %q (%v)", title, err)
	}
	return id
}

// exportMem exports src (one session or all) into the SDK's in-memory
// exporter.
func exportMem(t *testing.T, src telemetry.Source, o telemetry.ExportOptions) tracetest.SpanStubs {
	t.Helper()
	mem := tracetest.NewInMemoryExporter()
	tp := telemetry.NewProvider(mem, telemetry.ProviderOptions{Block: true})
	if _, err := telemetry.Export(context.Background(), src, tp, o); err != nil {
		t.Fatal(err)
	}
	spans := mem.GetSpans() // the in-memory exporter forgets them on Shutdown
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	return spans
}

func attr(kvs []attribute.KeyValue, k string) (attribute.Value, bool) {
	for _, kv := range kvs {
		if string(kv.Key) == k {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

// TestExport_Sample_Injection maps the sample's prompt-injection session:
// one invoke_agent turn, its chat and execute_tool spans under it, the
// three blocked calls carrying the seq and hash of the verdict that
// blocked them, every span and event naming a ledger entry whose hash it
// holds.
func TestExport_Sample_Injection(t *testing.T) {
	l := openSample(t)
	session := sessionTitled(t, l, "Follow the README setup")
	tl, err := replay.Build(l, session, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	spans := exportMem(t, l, telemetry.ExportOptions{Session: session})
	turn := tl.Turns[0]
	wantTrace := telemetry.TraceID(l.ID(), session, turn.Seq)
	byName := map[string]int{}
	var root *tracetest.SpanStub
	for i := range spans {
		s := &spans[i]
		byName[strings.Fields(s.Name)[0]]++
		checkLedgerAttrs(t, l, s.Name, s.Attributes)
		for _, ev := range s.Events {
			checkLedgerAttrs(t, l, s.Name+"/"+ev.Name, ev.Attributes)
		}
		if s.SpanContext.TraceID() != wantTrace {
			t.Errorf("%s: trace %s, want %s", s.Name, s.SpanContext.TraceID(), wantTrace)
		}
		if s.Name == "invoke_agent opx" {
			root = s
		}
		if v, _ := attr(s.Attributes, "gen_ai.conversation.id"); v.AsString() != session {
			t.Errorf("%s: conversation %q", s.Name, v.AsString())
		}
	}
	if root == nil || root.Parent.IsValid() {
		t.Fatalf("no root invoke_agent span in %v", byName)
	}
	if byName["chat"] != tl.Totals.ModelCalls || byName["execute_tool"] != tl.Totals.ToolCalls {
		t.Errorf("spans %v, want %d chat and %d execute_tool", byName, tl.Totals.ModelCalls, tl.Totals.ToolCalls)
	}
	blocked := map[string]*replay.ToolCall{}
	for _, tc := range tl.Blocked() {
		blocked[tc.CallID] = tc
	}
	nBlocked := 0
	for i := range spans {
		s := &spans[i]
		if s.Name == "invoke_agent opx" {
			continue
		}
		if s.Parent.SpanID() != root.SpanContext.SpanID() {
			t.Errorf("%s: parent %s, want the turn %s", s.Name, s.Parent.SpanID(), root.SpanContext.SpanID())
		}
		if s.Name == "chat" || strings.HasPrefix(s.Name, "chat ") {
			if v, _ := attr(s.Attributes, "gen_ai.provider.name"); v.AsString() == "" {
				t.Errorf("%s: no provider", s.Name)
			}
			if _, ok := attr(s.Attributes, "gen_ai.usage.input_tokens"); !ok {
				t.Errorf("%s: no usage", s.Name)
			}
		}
		id, _ := attr(s.Attributes, "gen_ai.tool.call.id")
		tc := blocked[id.AsString()]
		if tc == nil {
			continue
		}
		nBlocked++
		v, _ := attr(s.Attributes, "opx.blocked.seq")
		h, _ := attr(s.Attributes, "opx.blocked.hash")
		e, err := l.Get(tc.BlockedBy.Seq)
		if err != nil {
			t.Fatal(err)
		}
		if uint64(v.AsInt64()) != tc.BlockedBy.Seq || h.AsString() != e.Hash().String() {
			t.Errorf("%s: blocked by seq %d hash %s, want %d %s", s.Name, v.AsInt64(), h.AsString(), tc.BlockedBy.Seq, e.Hash())
		}
		if en, _ := attr(s.Attributes, "opx.enforced"); en.AsString() != "blocked" {
			t.Errorf("%s: enforced %q", s.Name, en.AsString())
		}
		if et, _ := attr(s.Attributes, "error.type"); et.AsString() != "opx.blocked" {
			t.Errorf("%s: error.type %q", s.Name, et.AsString())
		}
		if _, ok := attr(s.Attributes, "gen_ai.tool.call.arguments"); ok {
			t.Errorf("%s: content exported without telemetry.content", s.Name)
		}
	}
	if nBlocked != len(blocked) || nBlocked == 0 {
		t.Errorf("%d blocked spans, want %d", nBlocked, len(blocked))
	}
}

// checkLedgerAttrs checks that kvs name an entry of l by seq and hash.
func checkLedgerAttrs(t *testing.T, l *ledger.Ledger, what string, kvs []attribute.KeyValue) {
	t.Helper()
	id, _ := attr(kvs, "opx.ledger.id")
	seq, ok1 := attr(kvs, "opx.ledger.seq")
	h, ok2 := attr(kvs, "opx.ledger.hash")
	if id.AsString() != l.ID() || !ok1 || !ok2 {
		t.Errorf("%s: ledger attributes %v", what, kvs)
		return
	}
	e, err := l.Get(uint64(seq.AsInt64()))
	if err != nil || e.Hash().String() != h.AsString() {
		t.Errorf("%s: seq %d hash %s does not match the ledger (%v)", what, seq.AsInt64(), h.AsString(), err)
	}
}

// TestExport_Twice_SameIDs exports the whole sample twice: the same spans
// with the same ids and times (re-export is idempotent).
func TestExport_Twice_SameIDs(t *testing.T) {
	l := openSample(t)
	a := exportMem(t, l, telemetry.ExportOptions{})
	b := exportMem(t, l, telemetry.ExportOptions{})
	if len(a) == 0 || len(a) != len(b) {
		t.Fatalf("%d and %d spans", len(a), len(b))
	}
	key := func(s tracetest.SpanStub) string {
		return s.SpanContext.TraceID().String() + s.SpanContext.SpanID().String() + s.Parent.SpanID().String() + s.Name +
			s.StartTime.String() + s.EndTime.String()
	}
	seen := map[string]int{}
	for _, s := range a {
		seen[key(s)]++
	}
	for _, s := range b {
		seen[key(s)]--
	}
	for k, n := range seen {
		if n != 0 {
			t.Errorf("span %s differs between exports", k)
		}
	}
	// Every kind of span the sample holds is there, sub-agents too.
	names := map[string]bool{}
	for _, s := range a {
		names[strings.Fields(s.Name)[0]] = true
	}
	for _, n := range []string{"invoke_agent", "chat", "execute_tool"} {
		if !names[n] {
			t.Errorf("no %s span among %v", n, names)
		}
	}
}

// TestExport_Content_OnlyWhenAsked checks that content appears with
// Content and never for the sample's off-the-record session.
func TestExport_Content_OnlyWhenAsked(t *testing.T) {
	l := openSample(t)
	spans := exportMem(t, l, telemetry.ExportOptions{Content: true})
	otr := map[string]bool{}
	if err := l.Range(0, ^uint64(0), func(e ledger.Entry) error {
		if e.Type == event.TypeSessionCreated && strings.Contains(string(e.Data), `"mode":"otr"`) {
			otr[e.Session] = true
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	content := 0
	for _, s := range spans {
		conv, _ := attr(s.Attributes, "gen_ai.conversation.id")
		for _, k := range []string{"gen_ai.tool.call.arguments", "gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.tool.call.result"} {
			if _, ok := attr(s.Attributes, k); ok {
				content++
				if otr[conv.AsString()] {
					t.Errorf("%s of off-the-record session %s has %s", s.Name, conv.AsString(), k)
				}
			}
		}
	}
	if content == 0 {
		t.Error("no content exported with Content on")
	}
}
