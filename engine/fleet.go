package engine

import (
	"context"
	"time"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
)

// Shipper ships the ledger to a fleet while the engine runs (fleet/ship).
// The engine owns this interface so that it never imports the fleet,
// whose collector imports the engine's packages: the shipper is started
// by whoever starts the engine (Options.Fleet), and the engine only asks
// where it stands and stops it.
type Shipper interface {
	// Status is where shipping stands, for GetStatus.
	Status() *opxv1.FleetStatus
	// Close ships what it can within drain, then stops.
	Close(drain time.Duration) error
}

// CosignRecorder records in the ledger a witness's cosignature the
// shipper accepted (the shipper never writes entries itself).
type CosignRecorder interface {
	RecordCosigned(ctx context.Context, c *event.Cosigned) error
}

// StartShipper starts shipping the ledger in the background, recording
// the cosignatures it accepts with rec. It must not block on the fleet:
// NATS being down is only a state Status shows.
type StartShipper func(ctx context.Context, rec CosignRecorder) (Shipper, error)

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
	s, err := e.opts.Fleet(context.WithoutCancel(ctx), cosignRecorder{e})
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
	return s.Status()
}
