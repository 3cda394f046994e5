package cli

import (
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"net"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/opx-dev/opx/cli/internal/ledgerloc"
	"github.com/opx-dev/opx/cli/internal/usage"
	"github.com/urfave/cli/v2"

	"github.com/opx-dev/opx/cli/internal/ui"
	"github.com/opx-dev/opx/fleet"
	"github.com/opx-dev/opx/fleet/collector"
	"github.com/opx-dev/opx/fleet/natsrv"
	"github.com/opx-dev/opx/fleet/witnesshttp"
	"github.com/opx-dev/opx/internal/fdlimit"
	"github.com/opx-dev/opx/internal/regularfile"
)

// defaultEmbeddedListen is where --embedded-nats listens for engines: the
// NATS port on loopback (engines on other machines need --listen).
const defaultEmbeddedListen = "127.0.0.1:4222"

func collectorCommand() *cli.Command {
	return &cli.Command{
		Name:  "collector",
		Usage: "collect the fleet's ledgers from NATS JetStream: verify, witness and serve them for review",
		UsageText: "opx collector (--nats URL | --embedded-nats DIR [--listen HOST:PORT]) --store DIR [--config FILE]\n" +
			"                 [--witness-listen HOST:PORT [--witness-tls-cert FILE --witness-tls-key FILE | --witness-insecure-listen]\n" +
			"                  [--witness-logs FILE] [--witness-rate N] [--witness-client-rate N]]\n" +
			"   opx collector key --store DIR [--json]",
		Description: "Runs until interrupted (SIGINT, SIGTERM). A durable JetStream consumer reads every engine's ledger\n" +
			"subject; each source ledger is kept in STORE/sources/<ledger id>/ledger.db, an ordinary opx ledger\n" +
			"(review it with --ledger PATH, or --source ID --store DIR), verified as it arrives: the chain, each\n" +
			"signed checkpoint (key pinned on first sight or from allow_keys in --config), each checkpoint's\n" +
			"consistency with the ones before. Each checkpoint it verified is cosigned with the store's witness\n" +
			"key (`opx collector key`), recorded in STORE/collector.db and published back to its engine. Anything\n" +
			"wrong is an alert (`opx fleet alerts`). --embedded-nats runs a JetStream server in this process for\n" +
			"one machine, its data in DIR. --witness-listen also makes it a C2SP tlog-witness: POST\n" +
			"/add-checkpoint for its sources' origins and the logs in --witness-logs: HTTPS with\n" +
			"--witness-tls-cert/--witness-tls-key on any address; plain HTTP on a loopback address (a TLS proxy in\n" +
			"front), or beyond it with --witness-insecure-listen. docs/fleet.md.\n\n" + exitCodesHelp(""),
		HideHelpCommand: true,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "nats", Usage: "NATS server `URL`s, comma-separated (default: url in --config)"},
			&cli.StringFlag{Name: "embedded-nats", Usage: "run a JetStream server in-process with its data in `DIR`", TakesFile: true},
			&cli.StringFlag{Name: "listen", Usage: "with --embedded-nats: `HOST:PORT` engines connect to", Value: defaultEmbeddedListen},
			&cli.StringFlag{Name: "store", Usage: "the collector's store `DIR` (default $" + EnvFleetStore + ")", TakesFile: true},
			&cli.StringFlag{Name: "config", Usage: "collector config `FILE` (YAML: url, creds, nkey, tls, prefix, replicas, durable, stall_after, allow_keys, max_sources)", TakesFile: true},
			&cli.StringFlag{Name: "prefix", Usage: "subject `PREFIX` (default: the config's, else " + fleet.DefaultPrefix + ")"},
			&cli.DurationFlag{Name: "stall-after", Usage: "alert a source that ships nothing for `DURATION` (0: never; default: the config's, else 0)"},
			&cli.StringFlag{Name: "witness-listen", Usage: "serve C2SP tlog-witness POST /add-checkpoint on `HOST:PORT` (docs/fleet.md)"},
			&cli.StringFlag{Name: "witness-tls-cert", Usage: "serve --witness-listen in HTTPS with the certificate (chain) in `FILE` (PEM)", TakesFile: true},
			&cli.StringFlag{Name: "witness-tls-key", Usage: "the private key of --witness-tls-cert in `FILE` (PEM)", TakesFile: true},
			&cli.BoolFlag{Name: "witness-insecure-listen", Usage: "let --witness-listen be an address other than loopback in plain HTTP"},
			&cli.StringFlag{Name: "witness-logs", Usage: "other logs to witness: `FILE` of ORIGIN KEY lines (besides the sources)", TakesFile: true},
			&cli.Float64Flag{Name: "witness-rate", Usage: "add-checkpoint requests per second per origin (burst twice that)", Value: 10},
			&cli.Float64Flag{Name: "witness-client-rate", Usage: "add-checkpoint requests per second per client address, an IPv6 client's /64 (burst twice that; the 4096 addresses seen last are remembered)", Value: witnesshttp.DefaultClientRate},
		},
		Subcommands: []*cli.Command{collectorKeyCommand()},
		Action:      runCollector,
	}
}

func collectorKeyCommand() *cli.Command {
	return &cli.Command{
		Name:      "key",
		Usage:     "print the collector's witness verifier key (creating the key on first use)",
		UsageText: "opx collector key --store DIR [--json]",
		Description: "Prints the verifier key of the store's witness key (STORE/witness.key, 0600), the KEY of\n" +
			"`opx ledger verify --witness KEY` and of an engine's fleet.witness.\n\n" + exitCodesHelp(""),
		HideHelpCommand: true,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "store", Usage: "the collector's store `DIR` (default $" + EnvFleetStore + ")", TakesFile: true},
			ui.JSONFlag(),
		},
		Action: runCollectorKey,
	}
}

// collectorSetup is what `opx collector` runs with, from flags and config.
type collectorSetup struct {
	store      string
	url        string // "" with --embedded-nats until the server starts
	embedded   string
	listen     string
	prefix     string
	stallAfter time.Duration
	cfg        *collectorConfig
	// witnessListen, witnessLogs and witnessRate: the collector as a
	// C2SP tlog-witness (--witness-listen, --witness-logs, --witness-rate).
	witnessListen string
	witnessLogs   []collector.WitnessLog
	witnessRate   float64
	witnessClient float64       // --witness-client-rate
	witnessTLS    *tls.Config   // --witness-tls-cert/--witness-tls-key; nil: plain HTTP
	natsOpts      []nats.Option // with --embedded-nats: the collector's login
}

// embeddedCollectorUser is the collector's user on its embedded server,
// the one that may publish cosignatures.
const embeddedCollectorUser = "opx-collector"

// collectorArgs checks the flags and the config file, without starting
// anything.
func collectorArgs(c *cli.Context) (*collectorSetup, error) {
	if _, err := wantArgs(c, 0, 0, ""); err != nil {
		return nil, err
	}
	store, err := ledgerloc.FleetStore(c)
	if err != nil {
		return nil, err
	}
	s := &collectorSetup{store: store, cfg: &collectorConfig{}, embedded: c.String("embedded-nats"), listen: c.String("listen")}
	if p := c.String("config"); p != "" {
		if s.cfg, err = readCollectorConfig(p); err != nil {
			return nil, err
		}
	}
	s.url = s.cfg.URL
	if c.IsSet("nats") {
		if s.url = c.String("nats"); s.url == "" {
			return nil, usage.Errorf(c, "--nats needs a URL")
		}
		if err := checkNATSURL(s.url); err != nil {
			return nil, usage.Errorf(c, "--nats: %v", err)
		}
	}
	if c.IsSet("embedded-nats") && s.embedded == "" {
		return nil, usage.Errorf(c, "--embedded-nats needs a directory")
	}
	switch {
	case s.embedded != "" && c.IsSet("nats"):
		return nil, usage.Errorf(c, "--nats and --embedded-nats: one or the other")
	case s.embedded != "":
		s.url = "" // the embedded server's, once it runs
	case s.url == "":
		return nil, usage.Errorf(c, "which NATS? give --nats URL, --embedded-nats DIR, or url in --config")
	}
	if c.IsSet("listen") {
		if s.embedded == "" {
			return nil, usage.Errorf(c, "--listen goes with --embedded-nats")
		}
		host, port, err := net.SplitHostPort(s.listen)
		if n, perr := strconv.Atoi(port); err != nil || host == "" || perr != nil || n < 0 || n > 65535 {
			return nil, usage.Errorf(c, "--listen %q: want HOST:PORT", s.listen)
		}
	}
	s.prefix = s.cfg.Prefix
	if c.IsSet("prefix") {
		s.prefix = c.String("prefix")
	}
	if s.prefix == "" {
		s.prefix = fleet.DefaultPrefix
	}
	if err := fleet.CheckPrefix(s.prefix); err != nil {
		return nil, usage.Errorf(c, "--prefix: %v", err)
	}
	if s.cfg.StallAfter != "" {
		s.stallAfter, _ = time.ParseDuration(s.cfg.StallAfter) // checked
	}
	if c.IsSet("stall-after") {
		if s.stallAfter = c.Duration("stall-after"); s.stallAfter < 0 {
			return nil, usage.Errorf(c, "--stall-after must not be negative")
		}
	}
	s.witnessListen, s.witnessRate = c.String("witness-listen"), c.Float64("witness-rate")
	if s.witnessListen != "" {
		host, port, err := net.SplitHostPort(s.witnessListen)
		if n, perr := strconv.Atoi(port); err != nil || perr != nil || n < 0 || n > 65535 {
			return nil, usage.Errorf(c, "--witness-listen %q: want HOST:PORT", s.witnessListen)
		}
		cert, key := c.String("witness-tls-cert"), c.String("witness-tls-key")
		switch {
		case (cert == "") != (key == ""):
			return nil, usage.Errorf(c, "--witness-tls-cert and --witness-tls-key go together")
		case cert != "" && c.Bool("witness-insecure-listen"):
			return nil, usage.Errorf(c, "--witness-insecure-listen is for plain HTTP: not with --witness-tls-cert")
		case cert != "":
			pair, err := tls.LoadX509KeyPair(cert, key)
			if err != nil {
				return nil, usage.Errorf(c, "--witness-tls-cert/--witness-tls-key: %v", err)
			}
			s.witnessTLS = &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
		case !isLoopbackHost(host) && !c.Bool("witness-insecure-listen"):
			// Plain HTTP: loopback (behind a TLS proxy) unless the
			// operator says otherwise, as `opx serve` does.
			return nil, usage.Errorf(c, "--witness-listen %q is not a loopback address: give --witness-tls-cert and --witness-tls-key, put a TLS proxy in front of a loopback address, or give --witness-insecure-listen (plain HTTP)", s.witnessListen)
		case !isLoopbackHost(host):
			fmt.Fprintf(c.App.ErrWriter, "warning: --witness-listen %s: add-checkpoint served in plain HTTP beyond loopback\n", s.witnessListen)
		}
	} else {
		for _, f := range []string{"witness-insecure-listen", "witness-tls-cert", "witness-tls-key"} {
			if c.IsSet(f) {
				return nil, usage.Errorf(c, "--%s goes with --witness-listen", f)
			}
		}
	}
	if s.witnessRate <= 0 {
		return nil, usage.Errorf(c, "--witness-rate must be positive")
	}
	if s.witnessClient = c.Float64("witness-client-rate"); s.witnessClient <= 0 {
		return nil, usage.Errorf(c, "--witness-client-rate must be positive")
	}
	if p := c.String("witness-logs"); p != "" {
		if s.witnessListen == "" {
			return nil, usage.Errorf(c, "--witness-logs goes with --witness-listen")
		}
		b, err := regularfile.Read(p, maxWitnessLogsFile)
		if err != nil {
			return nil, fmt.Errorf("--witness-logs: %w", err)
		}
		if s.witnessLogs, err = collector.ParseWitnessLogs(string(b)); err != nil {
			return nil, fmt.Errorf("--witness-logs %s: %w", p, err)
		}
	}
	return s, nil
}

// maxWitnessLogsFile bounds the --witness-logs file.
const maxWitnessLogsFile = 4 << 20

func runCollector(c *cli.Context) error {
	s, err := collectorArgs(c)
	if err != nil {
		return err
	}
	// A collector holds files open per source (its mirrors): it runs with
	// the most open files the system allows it, and says how many.
	if r, err := fdlimit.Raise(); err != nil {
		fmt.Fprintf(c.App.ErrWriter, "collector: %v\n", err)
	} else {
		fmt.Fprintf(c.App.ErrWriter, "collector: %s\n", r)
	}
	ctx, stop := signal.NotifyContext(c.Context, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if s.embedded != "" {
		host, port, _ := net.SplitHostPort(s.listen)
		n, _ := strconv.Atoi(port)
		// Only this collector may publish cosignatures (and resend
		// requests) or purge, change or delete the streams: it logs in
		// with a password made now and told no one; engines connect
		// without credentials, as before, and may not.
		var pw [16]byte
		if _, err := rand.Read(pw[:]); err != nil {
			return err
		}
		guard := &natsrv.Guard{User: embeddedCollectorUser, Password: hex.EncodeToString(pw[:]), Owned: fleet.CollectorOnly(s.prefix)}
		srv, err := natsrv.Start(natsrv.Options{Dir: s.embedded, Host: host, Port: n, Guard: guard})
		if err != nil {
			return fmt.Errorf("collector: embedded NATS: %w", err)
		}
		defer srv.Shutdown()
		s.url = srv.ClientURL()
		s.natsOpts = append(s.natsOpts, nats.UserInfo(guard.User, guard.Password))
		fmt.Fprintf(c.App.ErrWriter, "collector: embedded NATS JetStream at %s (data in %s)\n", s.url, s.embedded)
	}
	return runCollectorService(ctx, c, s)
}

func runCollectorKey(c *cli.Context) error {
	if _, err := wantArgs(c, 0, 0, ""); err != nil {
		return err
	}
	store, err := ledgerloc.FleetStore(c)
	if err != nil {
		return err
	}
	key, err := collectorWitnessKey(store)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return ui.WriteJSON(c, struct {
			WitnessKey string `json:"witness_key"`
		}{key})

	}
	fmt.Fprintln(c.App.Writer, key)
	return nil
}

// isLoopbackHost reports whether host (of HOST:PORT) is loopback only:
// "localhost" or a loopback IP ("" and 0.0.0.0 are every interface).
func isLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
