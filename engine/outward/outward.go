package outward

import (
	"context"
	"sync"
	"time"

	"github.com/opx-dev/opx/ledger/event"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
)

// Shipper ships the ledger to a fleet while the engine runs (fleet/ship):
// the engine only asks where it stands and stops it.
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

// Witnesses submits the engine's signed checkpoints to C2SP
// tlog-witnesses (engine/witness): Submit is handed each checkpoint note
// the engine signed, once durable, and must never block (the tool path
// never waits on a witness).
type Witnesses interface {
	Submit(note string)
	Status() []*opxv1.WitnessStatus
	Close(drain time.Duration) error
}

// Recorder records, durably and in no session, what the outside answered
// (ledger.cosigned, ledger.witness_alert).
type Recorder func(ctx context.Context, p event.Payload) error

// WitnessRecorder is the Recorder the witnesses record through.
type WitnessRecorder = Recorder

// StartWitnesses starts submitting checkpoints in the background.
type StartWitnesses func(ctx context.Context, rec WitnessRecorder) (Witnesses, error)

// Telemetry exports the ledger as OpenTelemetry spans while the engine
// runs (telemetry.Live): it reads entries once durable, in its own
// goroutine; the engine only asks where it stands and stops it.
type Telemetry interface {
	Status() *opxv1.TelemetryStatus
	Close(drain time.Duration) error
}

// StartTelemetry starts the export in the background. It must not block
// on the collector: one that is down is only a counter in Status.
type StartTelemetry func(ctx context.Context) (Telemetry, error)

// Drains bound how long a stopping engine waits: for its last entries
// (engine.stopped among them) to be shipped, and for a request to a
// witness under way. What is left goes at the next start (the shipper
// from its cursor; the submitter reads the latest checkpoint from the
// ledger).
const (
	FleetDrain   = 3 * time.Second
	WitnessDrain = 2 * time.Second
	// TelemetryDrain bounds sending the spans still queued at stop.
	TelemetryDrain = 2 * time.Second
)

// Set is the engine's shipper and witnesses while it runs. The zero Set
// runs neither.
type Set struct {
	mu        sync.Mutex
	shipper   Shipper
	witnesses Witnesses
	telemetry Telemetry
}

// StartTelemetry starts the OpenTelemetry export (nil starts nothing), in
// the background; a failure to start is returned for the engine to
// report, not to stop on.
func (s *Set) StartTelemetry(ctx context.Context, start StartTelemetry) error {
	if start == nil {
		return nil
	}
	t, err := start(context.WithoutCancel(ctx))
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.telemetry = t
	s.mu.Unlock()
	return nil
}

// TelemetryStatus is where the OpenTelemetry export stands, for
// GetStatus (nil when off).
func (s *Set) TelemetryStatus() *opxv1.TelemetryStatus {
	s.mu.Lock()
	t := s.telemetry
	s.mu.Unlock()
	if t == nil {
		return nil
	}
	return t.Status()
}

// Start starts what is configured (nil starts nothing), in the
// background: neither blocks the engine, and a failure to start is
// returned for the engine to report, not to stop on.
func (s *Set) Start(ctx context.Context, fleet StartShipper, witnesses StartWitnesses, rec Recorder) (fleetErr, witnessErr error) {
	ctx = context.WithoutCancel(ctx)
	if fleet != nil {
		sh, err := fleet(ctx, cosignRecorder(rec))
		fleetErr = err
		if err == nil {
			s.mu.Lock()
			s.shipper = sh
			s.mu.Unlock()
		}
	}
	if witnesses != nil {
		w, err := witnesses(ctx, rec)
		witnessErr = err
		if err == nil {
			s.mu.Lock()
			s.witnesses = w
			s.mu.Unlock()
		}
	}
	return fleetErr, witnessErr
}

// Submit hands a signed checkpoint note to the witnesses, if any.
func (s *Set) Submit(note string) {
	s.mu.Lock()
	w := s.witnesses
	s.mu.Unlock()
	if w != nil && note != "" {
		w.Submit(note)
	}
}

// Stop stops the telemetry export, the witnesses, then the shipper (it ships the entries the
// engine recorded last), each within its drain; logf reports a failure.
func (s *Set) Stop(logf func(format string, args ...any)) {
	s.mu.Lock()
	w, sh, t := s.witnesses, s.shipper, s.telemetry
	s.mu.Unlock()
	if t != nil {
		if err := t.Close(TelemetryDrain); err != nil {
			logf("engine: telemetry: %v", err)
		}
	}
	if w != nil {
		if err := w.Close(WitnessDrain); err != nil {
			logf("engine: witnesses: %v", err)
		}
	}
	if sh != nil {
		if err := sh.Close(FleetDrain); err != nil {
			logf("engine: fleet: %v", err)
		}
	}
}

// FleetStatus is the shipping state for GetStatus (nil when off).
func (s *Set) FleetStatus() *opxv1.FleetStatus {
	s.mu.Lock()
	sh := s.shipper
	s.mu.Unlock()
	if sh == nil {
		return nil
	}
	return sh.Status()
}

// WitnessStatus is where each witness stands, for GetStatus.
func (s *Set) WitnessStatus() []*opxv1.WitnessStatus {
	s.mu.Lock()
	w := s.witnesses
	s.mu.Unlock()
	if w == nil {
		return nil
	}
	return w.Status()
}

// cosignRecorder records the cosignatures the shipper accepted.
type cosignRecorder Recorder

func (r cosignRecorder) RecordCosigned(ctx context.Context, c *event.Cosigned) error {
	return r(ctx, c)
}
