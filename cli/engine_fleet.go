package cli

import (
	"fmt"

	"github.com/nats-io/nats.go"

	"github.com/opx-dev/opx/engine/config"
	"github.com/opx-dev/opx/fleet/ship"
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
