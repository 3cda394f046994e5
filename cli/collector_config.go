package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"go.yaml.in/yaml/v3"

	"github.com/opx-dev/opx/cli/internal/ui"
	"github.com/opx-dev/opx/fleet"
	"github.com/opx-dev/opx/ledger/tlog"
)

// maxCollectorConfig bounds the collector's config file (invariant 9: a
// config is outside input).
const maxCollectorConfig = 1 << 20

// maxAllowKeys bounds the allow-list.
const maxAllowKeys = 100000

// collectorConfig is the collector's config file (--config FILE, YAML).
// Flags given on the command line win over it.
type collectorConfig struct {
	// NATS: the server(s), comma-separated, and the connection's
	// credentials (absolute paths), as in an engine's fleet section.
	URL   string `yaml:"url"`
	Creds string `yaml:"creds"`
	NKey  string `yaml:"nkey"`
	TLS   struct {
		CA   string `yaml:"ca"`
		Cert string `yaml:"cert"`
		Key  string `yaml:"key"`
	} `yaml:"tls"`
	// Prefix is the subject prefix (default "opx"), Replicas the streams'
	// replicas when the collector creates them, Durable its consumer's
	// name: collectors sharing one name share the sources (JetStream
	// spreads the messages over them, so give each collector its own
	// prefix or name; docs/fleet.md "Operations").
	Prefix   string `yaml:"prefix"`
	Replicas int    `yaml:"replicas"`
	Durable  string `yaml:"durable"`
	// StallAfter: a source that ships nothing for this long while its
	// last hello said it runs is alerted as stalled ("0": never).
	StallAfter string `yaml:"stall_after"`
	// AllowKeys pins the checkpoint key of a source ledger id (its
	// verifier key, as `opx ledger key` prints it). A source not listed
	// is pinned on first sight from its first ledger.key entry.
	AllowKeys map[string]string `yaml:"allow_keys"`
	// MaxSources bounds the sources the collector takes (default 10000).
	MaxSources int `yaml:"max_sources"`
}

// readCollectorConfig reads and checks a collector config file.
func readCollectorConfig(path string) (*collectorConfig, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("collector config: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxCollectorConfig+1))
	if err != nil {
		return nil, fmt.Errorf("collector config %s: %w", path, err)
	}
	if len(b) > maxCollectorConfig {
		return nil, fmt.Errorf("collector config %s: larger than %d bytes", path, maxCollectorConfig)
	}
	var cfg collectorConfig
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("collector config %s: %w", path, err)
	}
	if err := cfg.check(); err != nil {
		return nil, fmt.Errorf("collector config %s: %w", path, err)
	}
	return &cfg, nil
}

// check refuses what the collector could not run with, naming the field.
func (c *collectorConfig) check() error {
	if c.Prefix != "" {
		if err := fleet.CheckPrefix(c.Prefix); err != nil {
			return err
		}
	}
	if c.Replicas < 0 || c.Replicas > 5 {
		return fmt.Errorf("replicas must be 0..5, got %d", c.Replicas)
	}
	if c.Durable != "" && !durableRE(c.Durable) {
		return fmt.Errorf("durable %q: want 1 to 64 letters, digits, _ or -", c.Durable)
	}
	if c.MaxSources < 0 {
		return fmt.Errorf("max_sources must be 0 (the default) or more, got %d", c.MaxSources)
	}
	if c.StallAfter != "" {
		if d, err := time.ParseDuration(c.StallAfter); err != nil || d < 0 {
			return fmt.Errorf("stall_after %q: want a duration such as 10m", c.StallAfter)
		}
	}
	for _, p := range []struct{ name, v string }{{"creds", c.Creds}, {"nkey", c.NKey}, {"tls.ca", c.TLS.CA}, {"tls.cert", c.TLS.Cert}, {"tls.key", c.TLS.Key}} {
		if p.v != "" && !filepath.IsAbs(p.v) {
			return fmt.Errorf("%s %q is not an absolute path", p.name, p.v)
		}
	}
	if (c.TLS.Cert == "") != (c.TLS.Key == "") {
		return errors.New("tls.cert and tls.key go together")
	}
	if c.Creds != "" && c.NKey != "" {
		return errors.New("creds and nkey: one or the other")
	}
	if c.URL != "" {
		if err := checkNATSURL(c.URL); err != nil {
			return err
		}
	}
	if len(c.AllowKeys) > maxAllowKeys {
		return fmt.Errorf("allow_keys: %d keys (at most %d)", len(c.AllowKeys), maxAllowKeys)
	}
	for id, k := range c.AllowKeys {
		if err := fleet.CheckLedgerID(id); err != nil {
			return fmt.Errorf("allow_keys: %w", err)
		}
		v, err := tlog.ParseVerifierKey(k)
		if err != nil {
			return fmt.Errorf("allow_keys %s: %v", id, err) // a config error, not an integrity finding
		}
		if _, ok := tlog.KeyOrigin(id, v.Name()); !ok {
			return fmt.Errorf("allow_keys %s: the key is for %q, not this ledger (nor an origin of the team's)", id, ui.Clip(v.Name(), 80))
		}
	}
	return nil
}

func durableRE(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

// checkNATSURL accepts one or more comma-separated NATS URLs.
func checkNATSURL(u string) error {
	for _, one := range strings.Split(u, ",") {
		scheme, rest, ok := strings.Cut(strings.TrimSpace(one), "://")
		if !ok || rest == "" || (scheme != "nats" && scheme != "tls" && scheme != "ws" && scheme != "wss") {
			return fmt.Errorf("%q is not a NATS url (nats://host:port, tls://host:port)", ui.Clip(one, 80))
		}
	}
	return nil
}

// natsOptions are the connection options the config's credentials give.
func (c *collectorConfig) natsOptions() ([]nats.Option, error) {
	var opts []nats.Option
	if c.Creds != "" {
		opts = append(opts, nats.UserCredentials(c.Creds))
	}
	if c.NKey != "" {
		o, err := nats.NkeyOptionFromSeed(c.NKey)
		if err != nil {
			return nil, fmt.Errorf("nkey %s: %w", c.NKey, err)
		}
		opts = append(opts, o)
	}
	if c.TLS.CA != "" {
		opts = append(opts, nats.RootCAs(c.TLS.CA))
	}
	if c.TLS.Cert != "" {
		opts = append(opts, nats.ClientCert(c.TLS.Cert, c.TLS.Key))
	}
	return opts, nil
}
