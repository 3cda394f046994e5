package telemetry

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/opx-dev/opx/ledger"
)

// Tracer is the instrumentation scope of the spans opx exports.
const Tracer = "github.com/opx-dev/opx/telemetry"

// Endpoint is where spans go: an OTLP collector.
type Endpoint struct {
	// URL is host:port or an http(s) URL.
	URL string
	// Protocol is "grpc" (the default) or "http" (OTLP/HTTP protobuf).
	Protocol string
	// Headers are sent with every export (an API key, a tenant).
	Headers map[string]string
	// Insecure sends in clear text (a collector on loopback).
	Insecure bool
	// Timeout bounds one export (10s when 0).
	Timeout time.Duration
}

// NewExporter returns the OTLP exporter for ep. It connects lazily: a
// collector that is down fails exports, never this call.
func NewExporter(ctx context.Context, ep Endpoint) (sdktrace.SpanExporter, error) {
	if ep.URL == "" {
		return nil, errors.New("telemetry: no endpoint")
	}
	timeout := ep.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	hostport, path, secure, err := splitEndpoint(ep.URL)
	if err != nil {
		return nil, err
	}
	if ep.Insecure {
		secure = false
	}
	switch ep.Protocol {
	case "", "grpc":
		opts := []otlptracegrpc.Option{otlptracegrpc.WithEndpoint(hostport), otlptracegrpc.WithTimeout(timeout),
			otlptracegrpc.WithRetry(otlptracegrpc.RetryConfig{Enabled: false})}
		if len(ep.Headers) > 0 {
			opts = append(opts, otlptracegrpc.WithHeaders(ep.Headers))
		}
		if !secure {
			opts = append(opts, otlptracegrpc.WithInsecure())
		}
		return otlptracegrpc.New(ctx, opts...)
	case "http":
		opts := []otlptracehttp.Option{otlptracehttp.WithEndpoint(hostport), otlptracehttp.WithTimeout(timeout),
			otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false})}
		if path != "" && path != "/" {
			opts = append(opts, otlptracehttp.WithURLPath(path))
		}
		if len(ep.Headers) > 0 {
			opts = append(opts, otlptracehttp.WithHeaders(ep.Headers))
		}
		if !secure {
			opts = append(opts, otlptracehttp.WithInsecure())
		} else {
			opts = append(opts, otlptracehttp.WithTLSClientConfig(&tls.Config{MinVersion: tls.VersionTLS12}))
		}
		return otlptracehttp.New(ctx, opts...)
	default:
		return nil, fmt.Errorf("telemetry: protocol %q is not grpc or http", ep.Protocol)
	}
}

// splitEndpoint reads host:port or a URL.
func splitEndpoint(s string) (hostport, path string, secure bool, err error) {
	if !strings.Contains(s, "://") {
		if strings.ContainsAny(s, "/?#") {
			return "", "", false, fmt.Errorf("telemetry: endpoint %q is neither host:port nor a URL", s)
		}
		return s, "", true, nil
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", "", false, fmt.Errorf("telemetry: endpoint: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", "", false, fmt.Errorf("telemetry: endpoint %q: want http(s)://host:port", s)
	}
	return u.Host, u.Path, u.Scheme == "https", nil
}

// Counting wraps an exporter and counts what it sent and what failed.
type Counting struct {
	sdktrace.SpanExporter
	Exported, Failed atomic.Uint64
	lastErr          atomic.Pointer[string]
	lastErrAt        atomic.Int64
}

// ExportSpans implements sdktrace.SpanExporter.
func (c *Counting) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	err := c.SpanExporter.ExportSpans(ctx, spans)
	if err != nil {
		c.Failed.Add(uint64(len(spans)))
		msg := err.Error()
		c.lastErr.Store(&msg)
		c.lastErrAt.Store(time.Now().UnixNano())
		return err
	}
	c.Exported.Add(uint64(len(spans)))
	return nil
}

// LastError is the last export's error and when, if any failed.
func (c *Counting) LastError() (string, time.Time) {
	p := c.lastErr.Load()
	if p == nil {
		return "", time.Time{}
	}
	return *p, time.Unix(0, c.lastErrAt.Load())
}

// ProviderOptions tune NewProvider.
type ProviderOptions struct {
	// Sample is the fraction of traces kept (all when 0 or >= 1).
	Sample float64
	// Queue bounds the spans waiting to be sent (2048 when 0).
	Queue int
	// Block makes a full queue wait rather than drop (an export reads a
	// recorded ledger at the exporter's pace).
	Block bool
	// Service is service.name (opx when "").
	Service string
}

// NewProvider returns a tracer provider sending to exp, with this
// package's deterministic ids and sampler.
func NewProvider(exp sdktrace.SpanExporter, o ProviderOptions) *sdktrace.TracerProvider {
	if o.Queue <= 0 {
		o.Queue = 2048
	}
	if o.Service == "" {
		o.Service = "opx"
	}
	bo := []sdktrace.BatchSpanProcessorOption{sdktrace.WithMaxQueueSize(o.Queue), sdktrace.WithMaxExportBatchSize(min(512, o.Queue)),
		sdktrace.WithBatchTimeout(time.Second)}
	if o.Block {
		bo = append(bo, sdktrace.WithBlocking())
	}
	res := resource.NewSchemaless(attribute.String("service.name", o.Service))
	return sdktrace.NewTracerProvider(sdktrace.WithIDGenerator(idGen{}), sdktrace.WithSampler(newSampler(o.Sample)),
		sdktrace.WithResource(res), sdktrace.WithBatcher(exp, bo...),
		sdktrace.WithRawSpanLimits(sdktrace.SpanLimits{AttributeValueLengthLimit: MaxContent + 64, AttributeCountLimit: 64,
			EventCountLimit: 128, AttributePerEventCountLimit: 32, LinkCountLimit: 1, AttributePerLinkCountLimit: 1}))
}

// Source is what Export reads: a ledger, or a collector's mirror of one.
type Source interface {
	ID() string
	Range(from, to uint64, fn func(ledger.Entry) error) error
}

// ExportOptions tune Export.
type ExportOptions struct {
	// Session limits the export to one session's entries ("" all).
	Session string
	// Content attaches content (see Options.Content).
	Content bool
}

// Stats is what an export did.
type Stats struct {
	Entries, Spans, Events, Truncated, Skipped uint64
}

// Export maps the entries of src (one session's, or all) to spans and
// sends them through tp's tracer; it flushes tp before returning (the
// caller shuts it down).
func Export(ctx context.Context, src Source, tp *sdktrace.TracerProvider, o ExportOptions) (Stats, error) {
	m := NewMapper(tp.Tracer(Tracer), Options{LedgerID: src.ID(), Content: o.Content})
	var st Stats
	err := src.Range(0, ^uint64(0), func(e ledger.Entry) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if o.Session != "" && e.Session != o.Session &&
			(e.Session != "" || (e.Type != "engine.started" && e.Type != "mcp.server_started")) {
			return nil
		}
		st.Entries++
		m.Apply(e)
		return nil
	})
	m.Flush()
	st.Spans, st.Events, st.Truncated, st.Skipped = m.Spans, m.Events, m.Truncated, m.Skipped
	if err != nil {
		return st, fmt.Errorf("telemetry: read ledger: %w", err)
	}
	if err := tp.ForceFlush(ctx); err != nil {
		return st, fmt.Errorf("telemetry: send: %w", err)
	}
	return st, nil
}
