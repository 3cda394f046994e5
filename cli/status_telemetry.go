package cli

import (
	"fmt"
	"io"

	"github.com/opx-dev/opx/cli/internal/ui"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
)

// telemetryStatusJSON is the OpenTelemetry export in status --json
// (absent when telemetry.otlp is off).
type telemetryStatusJSON struct {
	Endpoint    string `json:"endpoint"`
	Protocol    string `json:"protocol"`
	ReadSeq     uint64 `json:"read_seq"`
	Spans       uint64 `json:"spans"`
	Exported    uint64 `json:"exported"`
	Failed      uint64 `json:"failed"`
	Unsent      uint64 `json:"unsent"`
	Truncated   uint64 `json:"truncated"`
	LastError   string `json:"last_error,omitempty"`
	LastErrorAt string `json:"last_error_at,omitempty"`
}

func telemetryJSON(t *opxv1.TelemetryStatus) *telemetryStatusJSON {
	if t == nil {
		return nil
	}
	return &telemetryStatusJSON{Endpoint: t.Endpoint, Protocol: t.Protocol, ReadSeq: t.ReadSeq, Spans: t.Spans, Exported: t.Exported,
		Failed: t.Failed, Unsent: t.Unsent, Truncated: t.Truncated, LastError: t.LastError, LastErrorAt: t.LastErrorAt}
}

func printTelemetry(w io.Writer, t *telemetryStatusJSON) {
	if t == nil {
		fmt.Fprintf(w, "telemetry off\n")
		return
	}
	failed := fmt.Sprintf("%d failed", t.Failed)
	if t.Failed > 0 {
		failed = ui.Red(w, failed)
	}
	fmt.Fprintf(w, "telemetry OTLP/%s to %s: read up to %d, %d spans, %d exported, %s, %d unsent\n",
		t.Protocol, t.Endpoint, t.ReadSeq, t.Spans, t.Exported, failed, t.Unsent)
	if t.LastError != "" {
		fmt.Fprintf(w, "          last error %s: %s\n", t.LastErrorAt, t.LastError)
	}
}
