package telemetry

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"strings"

	"github.com/zeebo/blake3"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// idFor derives a deterministic id from the ledger id, the session and a
// seq: BLAKE3 of the three, domain-separated by kind.
func idFor(kind, ledgerID, session string, seq uint64) [32]byte {
	h := blake3.New()
	var n [8]byte
	for _, s := range []string{"opx-otel/1", kind, ledgerID, session} {
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	binary.BigEndian.PutUint64(n[:], seq)
	h.Write(n[:])
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// TraceID is the trace of the entry seq opening a trace (a turn) of
// session in ledger ledgerID.
func TraceID(ledgerID, session string, seq uint64) trace.TraceID {
	var t trace.TraceID
	s := idFor("trace", ledgerID, session, seq)
	copy(t[:], s[:16])
	return t
}

// SpanID is the span the entry seq of session opens.
func SpanID(ledgerID, session string, seq uint64) trace.SpanID {
	var t trace.SpanID
	s := idFor("span", ledgerID, session, seq)
	copy(t[:], s[:8])
	if !t.IsValid() {
		t[7] = 1
	}
	return t
}

// idKey carries the ids the next span started with that context must get.
type idKey struct{}

type wantIDs struct {
	trace trace.TraceID
	span  trace.SpanID
}

// idGen is the SDK's IDGenerator: it hands out the ids the mapper put in
// the context (it never invents one: a span without them is a bug, and
// gets the zero-derived ids rather than random ones).
type idGen struct{}

func (idGen) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	w, _ := ctx.Value(idKey{}).(wantIDs)
	return w.trace, w.span
}

func (idGen) NewSpanID(ctx context.Context, _ trace.TraceID) trace.SpanID {
	w, _ := ctx.Value(idKey{}).(wantIDs)
	return w.span
}

var _ sdktrace.IDGenerator = idGen{}

// ratioSampler keeps a trace when its id falls under the ratio, for every
// span of it alike (parent or not), so a sampled trace is whole and the
// live exporter and an export keep the same traces.
type ratioSampler struct {
	bound uint64
	all   bool
}

func newSampler(ratio float64) sdktrace.Sampler {
	if ratio <= 0 || ratio >= 1 {
		return ratioSampler{all: true}
	}
	return ratioSampler{bound: uint64(ratio * (1 << 63))}
}

func (s ratioSampler) ShouldSample(p sdktrace.SamplingParameters) sdktrace.SamplingResult {
	keep := s.all || binary.BigEndian.Uint64(p.TraceID[8:16])>>1 < s.bound
	psc := trace.SpanContextFromContext(p.ParentContext)
	if keep {
		return sdktrace.SamplingResult{Decision: sdktrace.RecordAndSample, Tracestate: psc.TraceState()}
	}
	return sdktrace.SamplingResult{Decision: sdktrace.Drop, Tracestate: psc.TraceState()}
}

func (s ratioSampler) Description() string { return "opx-trace-ratio" }

// ParseTraceparent reads a W3C traceparent header (version 00): the span
// context it names, or false for anything else.
func ParseTraceparent(v string) (trace.SpanContext, bool) {
	v = strings.TrimSpace(v)
	if len(v) != 55 || v[2] != '-' || v[35] != '-' || v[52] != '-' || v[:2] != "00" {
		return trace.SpanContext{}, false
	}
	var tid trace.TraceID
	var sid trace.SpanID
	var fl [1]byte
	if _, err := hex.Decode(tid[:], []byte(v[3:35])); err != nil || strings.ToLower(v) != v {
		return trace.SpanContext{}, false
	}
	if _, err := hex.Decode(sid[:], []byte(v[36:52])); err != nil {
		return trace.SpanContext{}, false
	}
	if _, err := hex.Decode(fl[:], []byte(v[53:55])); err != nil {
		return trace.SpanContext{}, false
	}
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.TraceFlags(fl[0]), Remote: true})
	if !sc.IsValid() {
		return trace.SpanContext{}, false
	}
	return sc, true
}

// Traceparent formats sc as a W3C traceparent header.
func Traceparent(sc trace.SpanContext) string {
	return "00-" + sc.TraceID().String() + "-" + sc.SpanID().String() + "-" + sc.TraceFlags().String()
}
