package telemetry

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/opx-dev/opx/ledger"
)

// LiveLedger is what Live reads: the engine's own ledger.
type LiveLedger interface {
	Source
	Watermark() (ledger.Watermark, error)
}

// LiveConfig configures Live.
type LiveConfig struct {
	Endpoint Endpoint
	// Sample is the fraction of traces sent (all when 0).
	Sample float64
	// Content attaches content (see Options.Content).
	Content bool
	// Queue bounds the spans waiting for the collector (2048 when 0).
	Queue int
	// Logf reports a failure to read the ledger (nil: silent).
	Logf func(format string, args ...any)
}

// Live exports a running engine's ledger as its entries become durable:
// it starts at the ledger's durable head (what came before is `opx ledger
// export --format otlp`'s) and follows the writer's watermark, in its own
// goroutine. Nothing it does is on the engine's path: it reads committed
// entries, and the SDK's queue is bounded (spans over it are dropped and
// counted), so a slow or hostile collector costs memory of at most the
// queue and only a counter.
type Live struct {
	l     LiveLedger
	tp    *sdktrace.TracerProvider
	exp   *Counting
	cfg   LiveConfig
	stop  chan struct{}
	done  chan struct{}
	once  sync.Once
	read  atomic.Uint64 // seq of the last entry mapped
	spans atomic.Uint64
	trunc atomic.Uint64
}

// LiveStatus is where a Live exporter stands.
type LiveStatus struct {
	Endpoint  string
	Protocol  string
	ReadSeq   uint64 // last entry mapped
	Spans     uint64 // spans ended (sampled or not)
	Exported  uint64 // spans the collector accepted
	Failed    uint64 // spans whose export failed
	Unsent    uint64 // spans ended but neither exported nor failed: waiting, over the queue, or not sampled
	Truncated uint64
	LastError string
	LastErrAt time.Time
}

// StartLive starts following l. The exporter connects lazily: a
// collector that is down is only a failure counted later.
func StartLive(ctx context.Context, l LiveLedger, cfg LiveConfig) (*Live, error) {
	exp, err := NewExporter(ctx, cfg.Endpoint)
	if err != nil {
		return nil, err
	}
	wm, err := l.Watermark()
	if err != nil {
		return nil, fmt.Errorf("telemetry: %w", err)
	}
	c := &Counting{SpanExporter: exp}
	lv := &Live{l: l, exp: c, cfg: cfg, stop: make(chan struct{}), done: make(chan struct{}),
		tp: NewProvider(c, ProviderOptions{Sample: cfg.Sample, Queue: cfg.Queue})}
	lv.read.Store(wm.Durable)
	go lv.run(wm.Durable + 1)
	return lv, nil
}

func (lv *Live) run(from uint64) {
	defer close(lv.done)
	m := NewMapper(lv.tp.Tracer(Tracer), Options{LedgerID: lv.l.ID(), Content: lv.cfg.Content})
	defer func() {
		m.Flush()
		lv.spans.Store(m.Spans)
		lv.trunc.Store(m.Truncated)
	}()
	for {
		wm, werr := lv.l.Watermark()
		if werr != nil && wm.Durable < from {
			lv.logf("telemetry: ledger: %v", werr)
			return
		}
		if wm.Durable >= from {
			err := lv.l.Range(from, wm.Durable, func(e ledger.Entry) error {
				select {
				case <-lv.stop:
					return errStopped
				default:
				}
				m.Apply(e)
				from = e.Seq + 1
				lv.read.Store(e.Seq)
				return nil
			})
			lv.spans.Store(m.Spans)
			lv.trunc.Store(m.Truncated)
			if errors.Is(err, errStopped) {
				return
			}
			if err != nil {
				lv.logf("telemetry: read ledger: %v", err)
				return
			}
		}
		if wm.Advanced == nil || werr != nil {
			// A read-only ledger, or a writer that failed: the durable
			// head will not move again.
			if werr != nil {
				lv.logf("telemetry: ledger: %v", werr)
			}
			return
		}
		select {
		case <-wm.Advanced:
		case <-lv.stop:
			return
		}
		// Gather what the engine commits for a moment before reading:
		// one read transaction and one wake-up per batch, not per
		// commit, so the export stays off the engine's cores.
		select {
		case <-time.After(batchDelay):
		case <-lv.stop:
			return
		}
	}
}

// batchDelay is how long Live lets durable entries gather before it reads
// them.
const batchDelay = 200 * time.Millisecond

var errStopped = errors.New("stopped")

func (lv *Live) logf(format string, args ...any) {
	if lv.cfg.Logf != nil {
		lv.cfg.Logf(format, args...)
	}
}

// Status reports where the exporter stands.
func (lv *Live) Status() LiveStatus {
	st := LiveStatus{Endpoint: lv.cfg.Endpoint.URL, Protocol: lv.cfg.Endpoint.Protocol, ReadSeq: lv.read.Load(),
		Spans: lv.spans.Load(), Exported: lv.exp.Exported.Load(), Failed: lv.exp.Failed.Load(), Truncated: lv.trunc.Load()}
	if st.Protocol == "" {
		st.Protocol = "grpc"
	}
	if done := st.Exported + st.Failed; st.Spans > done {
		st.Unsent = st.Spans - done
	}
	st.LastError, st.LastErrAt = lv.exp.LastError()
	return st
}

// Close stops following the ledger, ends the spans still open (marked
// opx.open) and sends what it can within drain.
func (lv *Live) Close(drain time.Duration) error {
	lv.once.Do(func() { close(lv.stop) })
	<-lv.done
	ctx, cancel := context.WithTimeout(context.Background(), drain)
	defer cancel()
	err := lv.tp.Shutdown(ctx)
	if err != nil {
		return fmt.Errorf("telemetry: %w", err)
	}
	return nil
}
