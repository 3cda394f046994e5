package cli

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/opx-dev/opx/cli/internal/ledgerloc"
	"github.com/opx-dev/opx/cli/internal/usage"
	"github.com/opx-dev/opx/fleet"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ocsf"
	"github.com/urfave/cli/v2"
)

// fleetExportCommand is `opx fleet export --format ocsf`: every source
// ledger of a collector's store as OCSF events, once or following them.
func fleetExportCommand(storeFlag func() cli.Flag) *cli.Command {
	return &cli.Command{
		Name:      "export",
		Usage:     "write the events of every source ledger as OCSF, one per line, for a SIEM",
		UsageText: "opx fleet export --format ocsf --store DIR [--source ID] [-o FILE] [--follow [--cursor FILE]]",
		Description: "Writes the OCSF events of each source ledger the store holds (as opx ledger export --format ocsf\n" +
			"does for one ledger, docs/ocsf.md), to -o FILE (created; with --follow resumed) or stdout. Each\n" +
			"event's device is the source's host as its hello claimed it, and its chain uid the source's ledger id.\n" +
			"With --follow it goes on as the collector mirrors more, through collector restarts, picking up new\n" +
			"sources as they appear; the cursor (FILE.cursor, or --cursor) holds each source's position, and on\n" +
			"resume FILE is cut back to what the cursor accounts for, so no event is written twice. A source whose\n" +
			"chain breaks is reported on stderr and stops; the others go on (exit 4 at the end).\n\n" +
			exitCodesHelp("integrity failure found: a source ledger's entries do not chain"),
		HideHelpCommand: true,
		Flags: append([]cli.Flag{storeFlag(),
			&cli.StringFlag{Name: "format", Usage: "`FORMAT` of the events: ocsf (the only one)"},
			&cli.StringFlag{Name: "source", Usage: "only source ledger `ID`"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write to `FILE` (default stdout)", TakesFile: true},
		}, ocsfExportFlags()[:2]...),
		Action: runFleetExport,
	}
}

// fleetPoll is how often a fleet follow looks for new sources.
const fleetPoll = time.Second

func runFleetExport(c *cli.Context) error {
	if _, err := wantArgs(c, 0, 0, ""); err != nil {
		return err
	}
	if c.String("format") != "ocsf" {
		return usage.Errorf(c, "--format ocsf is required (the fleet's entries travel as ledgers: opx ledger export --source ID)")
	}
	store, err := ledgerloc.FleetStore(c)
	if err != nil {
		return err
	}
	only := c.String("source")
	if c.IsSet("source") {
		if err := fleet.CheckLedgerID(only); err != nil {
			return usage.Errorf(c, "--source: %v", err)
		}
	}
	sources := func() ([]string, error) {
		if only != "" {
			return []string{only}, nil
		}
		return storeSourceIDs(store)
	}
	hosts := func() map[string]string {
		m := map[string]string{}
		if list, err := fleetSources(store); err == nil {
			for _, s := range list {
				m[s.ID] = s.Host
			}
		}
		return m
	}
	opts := func(id string, h map[string]string) ocsf.Options {
		return ocsf.Options{Host: h[id], Version: Version}
	}
	if !c.Bool("follow") {
		if c.IsSet("cursor") {
			return usage.Errorf(c, "--cursor is the resume point of --follow")
		}
		ids, err := sources()
		if err != nil {
			return err
		}
		w := c.App.Writer
		var f *os.File
		if out := c.String("output"); out != "" {
			if f, err = os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600); err != nil {
				return fmt.Errorf("export: %w", err)
			}
			defer f.Close()
			w = f
		}
		bw := bufio.NewWriterSize(w, 256<<10)
		h := hosts()
		var failed []error
		for _, id := range ids {
			if _, err := exportOCSFOnce(c, SourceLedgerPath(store, id), opts(id, h), bw); err != nil {
				// One damaged mirror hides no other source.
				failed = append(failed, fmt.Errorf("source %s: %w", id, err))
			}
		}
		if err := bw.Flush(); err != nil {
			return fmt.Errorf("export: %w", err)
		}
		return errors.Join(failed...)
	}

	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	c.Context = ctx
	out := &ocsfOutput{path: c.String("output"), cursorPath: c.String("cursor")}
	if err := out.open(c); err != nil {
		return err
	}
	defer out.close()
	var (
		mu      sync.Mutex
		failed  []error
		wg      sync.WaitGroup
		started = map[string]bool{}
	)
	for {
		ids, err := sources()
		if err != nil {
			fmt.Fprintf(c.App.ErrWriter, "fleet export: %v\n", err)
		}
		var h map[string]string
		for _, id := range ids {
			if started[id] {
				continue
			}
			if h == nil {
				h = hosts()
			}
			started[id] = true
			wg.Add(1)
			go func(id string, o ocsf.Options) {
				defer wg.Done()
				err := followOCSF(c, SourceLedgerPath(store, id), o, out, id)
				if err != nil && (ctx.Err() == nil || errors.Is(err, ledger.ErrIntegrity)) {
					fmt.Fprintf(c.App.ErrWriter, "source %s: %v\n", id, err)
					mu.Lock()
					failed = append(failed, fmt.Errorf("source %s: %w", id, err))
					mu.Unlock()
				}
			}(id, opts(id, h))
		}
		select {
		case <-ctx.Done():
		case <-time.After(fleetPoll):
			continue
		}
		break
	}
	wg.Wait()
	if err := out.save(); err != nil {
		failed = append(failed, err)
	}
	return errors.Join(failed...)
}
