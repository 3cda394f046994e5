package cli

import (
	"context"
	"fmt"
	"github.com/opx-dev/opx/engine/outward"
	"os"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/opx-dev/opx/engine/checkpoint"
	"github.com/opx-dev/opx/engine/config"
	"github.com/opx-dev/opx/fleet/ship"
	"github.com/opx-dev/opx/ledger"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
)

// fleetConfig turns the workspace's fleet section into the shipper's
// configuration: nil when shipping is off.
func fleetConfig(f config.Fleet) (*ship.Config, error) {
	if !f.Enabled {
		return nil, nil
	}
	var opts []nats.Option
	if f.Creds != "" {
		opts = append(opts, nats.UserCredentials(f.Creds))
	}
	if f.NKey != "" {
		o, err := nats.NkeyOptionFromSeed(f.NKey)
		if err != nil {
			return nil, fmt.Errorf("fleet.nkey: %w", err)
		}
		opts = append(opts, o)
	}
	if f.TLS.CA != "" {
		opts = append(opts, nats.RootCAs(f.TLS.CA))
	}
	if f.TLS.Cert != "" {
		opts = append(opts, nats.ClientCert(f.TLS.Cert, f.TLS.Key))
	}
	return &ship.Config{URL: f.URL, Prefix: f.Prefix, Replicas: f.Replicas, Options: opts, WitnessKey: f.Witness}, nil
}

// fleetStarter starts the engine's shipper (engine.Options.Fleet): the
// engine reaches the fleet only through outward.Shipper, so the shipper is
// started here, with the ledger l, said in the hello to be this host's,
// the workspace's and this version's, and carrying the ledger's verifier
// key when checkpoints are signed. Nil when shipping is off (fc nil).
func fleetStarter(fc *ship.Config, l *ledger.Ledger, workspace string, keeper *checkpoint.Keeper, logf func(format string, args ...any)) outward.StartShipper {
	if fc == nil {
		return nil
	}
	return func(ctx context.Context, rec outward.CosignRecorder) (outward.Shipper, error) {
		cfg := *fc
		if cfg.Host == "" {
			cfg.Host, _ = os.Hostname()
		}
		cfg.Workspace, cfg.Version = workspace, Version
		if keeper != nil {
			if v, ok := keeper.Verifier(); ok {
				cfg.VerifierKey = v.String()
			}
		}
		if cfg.Logf == nil {
			cfg.Logf = logf
		}
		s, err := ship.Start(ctx, cfg, l, rec)
		if err != nil {
			return nil, err
		}
		return fleetShipper{s}, nil
	}
}

// fleetShipper is a ship.Shipper as the engine sees it (outward.Shipper).
type fleetShipper struct{ s *ship.Shipper }

// Status implements outward.Shipper: the shipping state as GetStatus
// answers it.
func (f fleetShipper) Status() *opxv1.FleetStatus {
	st := f.s.Status()
	out := &opxv1.FleetStatus{Url: st.URL, Stream: st.Stream, Subject: st.Subject, Connected: st.Connected,
		AckedSeq: st.Acked, HasAcked: st.HasAcked, DurableSeq: st.Durable, LagEntries: st.LagEntries, LagMs: st.LagMS,
		LastError: st.LastError, CosignedSize: st.CosignedSize, Witness: st.Witness, Duplicates: st.Duplicates}
	if !st.LastErrorAt.IsZero() {
		out.LastErrorAt = st.LastErrorAt.UTC().Format(time.RFC3339Nano)
	}
	return out
}

// Close implements outward.Shipper.
func (f fleetShipper) Close(drain time.Duration) error { return f.s.Close(drain) }
