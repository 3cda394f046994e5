package cli

import (
	"context"
	"time"

	"github.com/opx-dev/opx/engine/config"
	"github.com/opx-dev/opx/engine/outward"
	"github.com/opx-dev/opx/ledger"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"github.com/opx-dev/opx/telemetry"
)

// telemetryStarter starts the engine's OpenTelemetry export of the ledger
// l (engine.Options.Telemetry): nil when telemetry.otlp sets no endpoint.
func telemetryStarter(t config.Telemetry, l *ledger.Ledger, logf func(format string, args ...any)) outward.StartTelemetry {
	if t.OTLP.Endpoint == "" {
		return nil
	}
	cfg := telemetry.LiveConfig{Endpoint: telemetry.Endpoint{URL: t.OTLP.Endpoint, Protocol: t.OTLP.Protocol, Headers: t.OTLP.Headers,
		Insecure: t.OTLP.Insecure}, Sample: t.OTLP.Sample, Content: t.Content, Logf: logf}
	return func(ctx context.Context) (outward.Telemetry, error) {
		lv, err := telemetry.StartLive(ctx, l, cfg)
		if err != nil {
			return nil, err
		}
		return engineTelemetry{lv}, nil
	}
}

// engineTelemetry is a telemetry.Live as the engine sees it
// (outward.Telemetry).
type engineTelemetry struct{ lv *telemetry.Live }

func (e engineTelemetry) Close(drain time.Duration) error { return e.lv.Close(drain) }

// Status implements outward.Telemetry.
func (e engineTelemetry) Status() *opxv1.TelemetryStatus {
	st := e.lv.Status()
	return &opxv1.TelemetryStatus{Endpoint: st.Endpoint, Protocol: st.Protocol, ReadSeq: st.ReadSeq, Spans: st.Spans,
		Exported: st.Exported, Failed: st.Failed, Unsent: st.Unsent, Truncated: st.Truncated, LastError: st.LastError,
		LastErrorAt: rfc3339(st.LastErrAt)}
}
