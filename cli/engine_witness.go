package cli

import (
	"context"
	"github.com/opx-dev/opx/engine/outward"
	"time"

	"github.com/opx-dev/opx/engine/config"
	"github.com/opx-dev/opx/engine/witness"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/tlog"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
)

// witnessStarter starts submitting the engine's checkpoints to the
// witnesses of ledger.witnesses (nil when it lists none), as checkpoints
// of origin (ledger.origin; "" the default, tlog.Origin(id)).
func witnessStarter(ws []config.LedgerWitness, origin string, l *ledger.Ledger, logf func(format string, args ...any)) outward.StartWitnesses {
	if len(ws) == 0 {
		return nil
	}
	if origin == "" {
		origin = tlog.Origin(l.ID())
	}
	return func(ctx context.Context, rec outward.WitnessRecorder) (outward.Witnesses, error) {
		opts := witness.Options{Origin: origin, Ledger: l, Logf: logf,
			Record: func(ctx context.Context, p event.Payload) error { return rec(ctx, p) }}
		for _, w := range ws {
			opts.Witnesses = append(opts.Witnesses, witness.Witness{URL: w.URL, Key: w.Key})
		}
		s, err := witness.New(opts)
		if err != nil {
			return nil, err
		}
		s.Start(ctx)
		return engineWitnesses{s}, nil
	}
}

// engineWitnesses is a witness.Submitter as the engine sees it
// (outward.Witnesses).
type engineWitnesses struct{ s *witness.Submitter }

func (e engineWitnesses) Submit(note string)              { e.s.Submit(note) }
func (e engineWitnesses) Close(drain time.Duration) error { return e.s.Close(drain) }

// Status implements outward.Witnesses: each witness as GetStatus answers.
func (e engineWitnesses) Status() []*opxv1.WitnessStatus {
	var out []*opxv1.WitnessStatus
	for _, st := range e.s.Status() {
		out = append(out, &opxv1.WitnessStatus{Url: st.URL, Name: st.Name, KeyHash: st.KeyHash, CosignedSize: st.CosignedSize,
			PendingSize: st.PendingSize, Submitted: st.Submitted, Cosigned: st.Cosigned, Conflicts: st.Conflicts,
			LastError: st.LastError, LastErrorAt: rfc3339(st.LastErrorAt), AlertKind: st.AlertKind, Alert: st.Alert, AlertAt: rfc3339(st.AlertAt)})
	}
	return out
}

func rfc3339(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}
