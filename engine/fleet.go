package engine

import (
	"context"
	"os"
	"time"

	"github.com/opx-dev/opx/fleet/ship"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
)

// fleetDrain bounds how long a stopping engine waits for its last
// entries (engine.stopped among them) to be shipped; whatever is left is
// shipped from the cursor at the next start.
const fleetDrain = 3 * time.Second

// startFleet starts shipping the ledger (Options.Fleet) in the
// background: it never blocks the engine, and NATS being down is only a
// state shown by status.
func (e *Engine) startFleet(ctx context.Context) error {
	if e.opts.Fleet == nil {
		return nil
	}
	cfg := *e.opts.Fleet
	if cfg.Host == "" {
		cfg.Host, _ = os.Hostname()
	}
	cfg.Workspace, cfg.Version = e.opts.Workspace, e.opts.Version
	if e.opts.Checkpoints != nil {
		if v, ok := e.opts.Checkpoints.Verifier(); ok {
			cfg.VerifierKey = v.String()
		}
	}
	if cfg.Logf == nil {
		cfg.Logf = e.opts.Logf
	}
	s, err := ship.Start(context.WithoutCancel(ctx), cfg, e.opts.Ledger, cosignRecorder{e})
	if err != nil {
		return err
	}
	e.mu.Lock()
	e.shipper = s
	e.mu.Unlock()
	return nil
}

// stopFleet ships what it can within fleetDrain, then stops.
func (e *Engine) stopFleet() {
	e.mu.Lock()
	s := e.shipper
	e.mu.Unlock()
	if s == nil {
		return
	}
	if err := s.Close(fleetDrain); err != nil {
		e.opts.Logf("engine: fleet: %v", err)
	}
}

// cosignRecorder records the witness's cosignatures the shipper accepted.
type cosignRecorder struct{ e *Engine }

func (r cosignRecorder) RecordCosigned(ctx context.Context, c *event.Cosigned) error {
	_, err := r.e.rec.Record(ctx, ledger.Sync, "", c)
	return err
}

// fleetStatusProto is the shipping state for GetStatus (nil when off).
func (e *Engine) fleetStatusProto() *opxv1.FleetStatus {
	e.mu.Lock()
	s := e.shipper
	e.mu.Unlock()
	if s == nil {
		return nil
	}
	st := s.Status()
	out := &opxv1.FleetStatus{Url: st.URL, Stream: st.Stream, Subject: st.Subject, Connected: st.Connected,
		AckedSeq: st.Acked, HasAcked: st.HasAcked, DurableSeq: st.Durable, LagEntries: st.LagEntries, LagMs: st.LagMS,
		LastError: st.LastError, CosignedSize: st.CosignedSize, Witness: st.Witness, Duplicates: st.Duplicates}
	if !st.LastErrorAt.IsZero() {
		out.LastErrorAt = st.LastErrorAt.UTC().Format(time.RFC3339Nano)
	}
	return out
}
