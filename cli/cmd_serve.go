package cli

import (
	"fmt"
	"os/signal"
	"syscall"

	"github.com/opx-dev/opx/cli/internal/console"
	"github.com/opx-dev/opx/cli/internal/ledgerloc"
	"github.com/opx-dev/opx/cli/internal/usage"
	"github.com/urfave/cli/v2"
)

func serveCommand() *cli.Command {
	return &cli.Command{
		Name:      "serve",
		Usage:     "serve an investigator's console for the ledger in the browser",
		UsageText: "opx serve [--workspace DIR | --ledger PATH | --store DIR [--source ID]] [--listen 127.0.0.1:PORT] [--tls-cert FILE --tls-key FILE | --insecure-listen]",
		Description: "Serves the sessions of the ledger (filter by mode, outcome, time and text; verdicts per day), each\n" +
			"session's timeline as opx replay builds it with a verification badge per entry (chain-verified,\n" +
			"in a signed checkpoint with its inclusion proof to download, cosigned by a witness), and the\n" +
			"session's HTML report and JSONL segment to download. It reads the ledger file, or the running\n" +
			"engine's ledger service while an engine holds it, and verifies what it shows as opx replay does.\n" +
			"Approvals: what the running engine asks, answered with a reason as opx approve and opx deny answer\n" +
			"(recorded by \"opx serve\"); the page follows the ledger (opx ledger follow's checked stream).\n" +
			"Annotations: a note on any step, appended as a ledger.note about that entry (opx ledger note --about).\n" +
			"With --store DIR and no --source, the fleet: the collector's sources (as opx fleet sources), its\n" +
			"alerts with their evidence, and each source's sessions and timelines.\n\n" +
			"It listens on 127.0.0.1 (a free port unless --listen) and prints a URL with a fresh access token:\n" +
			"every request needs it (the page keeps it in a cookie). Another address needs --tls-cert and\n" +
			"--tls-key, or --insecure-listen (plain HTTP, with a warning). Stop it with Ctrl-C.\n\n" +
			reviewVerifyHelp + exitCodesHelp("integrity failure found: the ledger cannot be read"),
		HideHelpCommand: true,
		Flags: append(append(ledgerloc.Flags(), reviewFlags()...),
			&cli.StringFlag{Name: "listen", Usage: "listen on `ADDR` (default 127.0.0.1 and a free port)"},
			&cli.StringFlag{Name: "tls-cert", Usage: "serve HTTPS with the certificate in `FILE`", TakesFile: true},
			&cli.StringFlag{Name: "tls-key", Usage: "serve HTTPS with the private key in `FILE`", TakesFile: true},
			&cli.BoolFlag{Name: "insecure-listen", Usage: "allow plain HTTP on an address other than loopback"},
		),
		Action: runServe,
	}
}

func runServe(c *cli.Context) error {
	if _, err := wantArgs(c, 0, 0, ""); err != nil {
		return err
	}
	o := console.Options{Listen: c.String("listen"), TLSCert: c.String("tls-cert"), TLSKey: c.String("tls-key"),
		InsecureListen: c.Bool("insecure-listen"), Warn: c.App.ErrWriter}
	var about console.About
	if _, store := usage.FlagGiven(c, "store"); store && !c.IsSet("source") {
		// The fleet: every source of the collector's store.
		f, err := newConsoleFleet(c)
		if err != nil {
			return err
		}
		o.Fleet, about = f, f.About()
	} else {
		src, err := newConsoleSource(c)
		if err != nil {
			return err
		}
		o.Source, about = src, src.about
	}
	srv, err := console.New(o)
	if err != nil {
		return err
	}
	ln, loopback, err := console.Listen(o)
	if err != nil {
		return usage.Errorf(c, "%v", err)
	}
	tls := o.TLSCert != ""
	fmt.Fprintf(c.App.Writer, "opx console for %s\n  %s\n", about.Path, srv.URL(ln, tls))
	ctx, stop := signal.NotifyContext(c.Context, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	return srv.Serve(ctx, ln, loopback, tls)
}
