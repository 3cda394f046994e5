package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/opx-dev/opx/cli/internal/ui"
	"github.com/opx-dev/opx/cli/internal/usage"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/telemetry"
)

// ledgerExportOTLPFlags are the flags of `opx ledger export --format otlp`.
func ledgerExportOTLPFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "endpoint", Usage: "--format otlp: the OTLP collector, `host:port` or http(s)://host:port[/path]"},
		&cli.StringFlag{Name: "protocol", Value: "grpc", Usage: "--format otlp: grpc or http"},
		&cli.BoolFlag{Name: "insecure", Usage: "--format otlp: send without TLS (a collector on loopback)"},
		&cli.StringSliceFlag{Name: "header", Usage: "--format otlp: `NAME=VALUE` sent with every export (repeatable)"},
		&cli.BoolFlag{Name: "content", Usage: "--format otlp: attach arguments, results and messages (never of an off-the-record session)"},
	}
}

// otlpExportJSON is the --json output of an OTLP export.
type otlpExportJSON struct {
	LedgerID  string `json:"ledger_id"`
	Session   string `json:"session,omitempty"`
	Endpoint  string `json:"endpoint"`
	Entries   uint64 `json:"entries"`
	Spans     uint64 `json:"spans"`
	Events    uint64 `json:"events"`
	Exported  uint64 `json:"exported"`
	Truncated uint64 `json:"truncated"`
	Skipped   uint64 `json:"skipped"`
}

// runLedgerExportOTLP is `opx ledger export --format otlp`: the ledger
// (or one session) sent as spans with their original timestamps and the
// ids derived from the ledger, so a second export of the same entries
// sends the same spans.
func runLedgerExportOTLP(c *cli.Context) error {
	if c.IsSet("output") || c.IsSet("tiles") {
		return usage.Errorf(c, "--format otlp sends to --endpoint; give neither -o nor --tiles")
	}
	ep := telemetry.Endpoint{URL: c.String("endpoint"), Protocol: c.String("protocol"), Insecure: c.Bool("insecure")}
	if ep.URL == "" {
		return usage.Errorf(c, "--format otlp needs --endpoint host:port")
	}
	if ep.Protocol != "grpc" && ep.Protocol != "http" {
		return usage.Errorf(c, "--protocol must be grpc or http, got %q", ep.Protocol)
	}
	for _, h := range c.StringSlice("header") {
		k, v, ok := strings.Cut(h, "=")
		if !ok || k == "" || strings.ContainsAny(h, "\r\n\x00") {
			return usage.Errorf(c, "--header %q is not NAME=VALUE", h)
		}
		if ep.Headers == nil {
			ep.Headers = map[string]string{}
		}
		ep.Headers[k] = v
	}
	rv, err := openReviewOrEngine(c)
	if err != nil {
		return err
	}
	defer rv.Close()
	var src telemetry.Source
	if rv.local != nil {
		src = rv.local
	} else {
		h, _ := rv.remote.Head()
		src = &rawSource{id: h.LedgerID, head: h.Seq, entries: rv.remote.Entries}
	}
	ctx := context.Background()
	exp, err := telemetry.NewExporter(ctx, ep)
	if err != nil {
		return err
	}
	counting := &telemetry.Counting{SpanExporter: exp}
	tp := telemetry.NewProvider(counting, telemetry.ProviderOptions{Block: true, Queue: 8192})
	st, err := telemetry.Export(ctx, chainChecked{src}, tp, telemetry.ExportOptions{Session: c.String("session"), Content: c.Bool("content")})
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if serr := tp.Shutdown(sctx); err == nil && serr != nil {
		err = fmt.Errorf("telemetry: %w", serr)
	}
	if err == nil && counting.Failed.Load() > 0 {
		msg, _ := counting.LastError()
		err = fmt.Errorf("%d of %d spans were not accepted by %s: %s", counting.Failed.Load(), st.Spans, ep.URL, msg)
	}
	if err != nil {
		return err
	}
	if c.IsSet("session") && st.Spans == 0 {
		return fmt.Errorf("session %q: nothing to export (no turn, call or event of it in the ledger)", c.String("session"))
	}
	out := otlpExportJSON{LedgerID: src.ID(), Session: c.String("session"), Endpoint: ep.URL, Entries: st.Entries, Spans: st.Spans,
		Events: st.Events, Exported: counting.Exported.Load(), Truncated: st.Truncated, Skipped: st.Skipped}
	if c.Bool("json") {
		return ui.WriteJSON(c, out)
	}
	fmt.Fprintf(c.App.Writer, "sent %s and %s from %s of ledger %s to %s (OTLP/%s)\n", ui.Plural(st.Spans, "span", "spans"),
		ui.Plural(st.Events, "event", "events"), ui.Plural(st.Entries, "entry", "entries"), out.LedgerID, ep.URL, ep.Protocol)
	if st.Truncated > 0 || st.Skipped > 0 {
		fmt.Fprintf(c.App.Writer, "  %d spans cut short (too many open), %d entries not read as their type says\n", st.Truncated, st.Skipped)
	}
	return nil
}

// rawSource reads a ledger through a running engine (or any raw entry
// stream) as a telemetry.Source.
type rawSource struct {
	id      string
	head    uint64
	entries func(from, to uint64, fn func(seq uint64, raw []byte) error) error
}

func (r *rawSource) ID() string { return r.id }

func (r *rawSource) Range(from, to uint64, fn func(ledger.Entry) error) error {
	to = min(to, r.head)
	return r.entries(from, to, func(seq uint64, raw []byte) error {
		e, err := ledger.ParseStored(seq, raw)
		if err != nil {
			return err
		}
		return fn(e)
	})
}

// chainChecked checks, as the entries go by, that each one's prev is the
// hash of the one before: the spans sent name the hashes of a chain that
// links (a damaged ledger stops the export at the break, an integrity
// failure).
type chainChecked struct{ telemetry.Source }

func (c chainChecked) Range(from, to uint64, fn func(ledger.Entry) error) error {
	var prev ledger.Hash
	have := false
	return c.Source.Range(from, to, func(e ledger.Entry) error {
		if (have || e.Seq == 0) && e.Prev != prev {
			return fmt.Errorf("export refused: %w", &ledger.IntegrityError{Seq: e.Seq, Kind: ledger.KindHashMismatch,
				Detail: "prev is not the hash of the entry before it"})
		}
		prev, have = e.Hash(), true
		return fn(e)
	})
}
