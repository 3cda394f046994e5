package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/opx-dev/opx/cli/internal/ledgerloc"
	"github.com/opx-dev/opx/cli/internal/usage"
	"github.com/urfave/cli/v2"

	"github.com/opx-dev/opx/cli/internal/ui"
	"github.com/opx-dev/opx/fleet"
	"github.com/opx-dev/opx/ledger/event"
)

// fleetCommand is the "opx fleet" group: review across machines, from a
// collector's store, whether or not the collector runs.
func fleetCommand() *cli.Command {
	storeFlag := func() cli.Flag {
		return &cli.StringFlag{Name: "store", Usage: "the collector's store `DIR` (default $" + EnvFleetStore + ")", TakesFile: true}
	}
	return &cli.Command{
		Name:      "fleet",
		Usage:     "review the fleet's ledgers a collector holds: sources, sessions, alerts",
		UsageText: "opx fleet COMMAND --store DIR [options]",
		Description: "Reads a collector's store (opx collector --store DIR), running or not. Each source ledger is an\n" +
			"ordinary opx ledger there: any review command reads it with --source ID --store DIR.\n\n" + exitCodesHelp(""),
		Action: unknownCommand,
		Subcommands: []*cli.Command{
			{
				Name:      "sources",
				Usage:     "list the source ledgers: host, workspace, head, checkpoint, cosigned size, lag, alerts",
				UsageText: "opx fleet sources --store DIR [--json]",
				Description: "HEAD is the last entry the collector verified and stored; CHECKPOINT the size of the last signed\n" +
					"checkpoint it verified, COSIGNED the size it cosigned as witness; LAG the entries the source said it\n" +
					"had (its last hello) beyond HEAD; SEEN when the source last shipped anything. Host and workspace are\n" +
					"the source's own claims.\n\n" + exitCodesHelp(""),
				HideHelpCommand: true,
				Flags:           []cli.Flag{storeFlag(), ui.JSONFlag()},
				Action:          runFleetSources,
			},
			{
				Name:      "sessions",
				Usage:     "list the sessions of every source ledger, most recent first",
				UsageText: "opx fleet sessions --store DIR [--source ID] [--include-otr] [--json]",
				Description: "Reads each source's sessions projection (as opx sessions does), through the collector while it runs.\n\n" +
					exitCodesHelp("integrity failure found: a source ledger's entries do not chain"),
				HideHelpCommand: true,
				Flags: []cli.Flag{storeFlag(),
					&cli.StringFlag{Name: "source", Usage: "only source ledger `ID`"},
					&cli.BoolFlag{Name: "include-otr", Aliases: []string{"all"}, Usage: "include off-the-record sessions"},
					ui.JSONFlag()},
				Action: runFleetSessions,
			},
			{
				Name:      "alerts",
				Usage:     "list the collector's alerts: broken chains, gaps, bad signatures, forks, rewinds, stalls",
				UsageText: "opx fleet alerts --store DIR [--source ID] [--kind KIND] [--json]",
				Description: "The alerts recorded in the collector's own ledger (STORE/collector.db), oldest first. Kinds:\n" +
					"broken-chain, gap, bad-signature, fork, rewind, rewrite, stalled, key-replaced, malformed, bad-blob.\n\n" +
					exitCodesHelp(""),
				HideHelpCommand: true,
				Flags: []cli.Flag{storeFlag(),
					&cli.StringFlag{Name: "source", Usage: "only alerts about source ledger `ID`"},
					&cli.StringFlag{Name: "kind", Usage: "only alerts of `KIND`"},
					ui.JSONFlag()},
				Action: runFleetAlerts,
			},
			fleetExportCommand(storeFlag),
		},
	}
}

// fleetSourceJSON is one source in `opx fleet sources --json`.
type fleetSourceJSON struct {
	ID        string `json:"id"`
	Host      string `json:"host"`
	Workspace string `json:"workspace"`
	// HeadSeq and HeadHash: the last entry verified and stored
	// (HasMirror false: nothing stored yet).
	HasMirror bool   `json:"has_mirror"`
	HeadSeq   uint64 `json:"head_seq"`
	HeadHash  string `json:"head_hash"`
	// Claimed is the head the source's last hello named; Lag the entries
	// it claimed beyond HeadSeq.
	Claimed uint64 `json:"claimed_head"`
	Lag     uint64 `json:"lag"`
	// Checkpoint: the tree size of the last signed checkpoint verified;
	// Cosigned: the last one cosigned (0: none).
	Checkpoint uint64 `json:"checkpoint_size"`
	Cosigned   uint64 `json:"cosigned_size"`
	LastSeen   string `json:"last_seen"` // RFC 3339, "" if never
	// LagSeconds: since the source last sent anything.
	LagSeconds float64 `json:"lag_seconds"`
	Held       int     `json:"held"`    // entries waiting for an earlier one
	Dropped    uint64  `json:"dropped"` // entries given up on
	Alerts     int     `json:"alerts"`
	Stalled    bool    `json:"stalled"`
	Path       string  `json:"path"` // the mirror ledger
}

// fleetAlertJSON is one alert in `opx fleet alerts --json`.
type fleetAlertJSON struct {
	Time   string `json:"time"`
	Source string `json:"source"`
	Kind   string `json:"kind"`
	Seq    uint64 `json:"seq"`
	Detail string `json:"detail"`
}

func runFleetSources(c *cli.Context) error {
	if _, err := wantArgs(c, 0, 0, ""); err != nil {
		return err
	}
	store, err := ledgerloc.FleetStore(c)
	if err != nil {
		return err
	}
	list, err := fleetSources(store)
	if err != nil {
		return err
	}
	sort.Slice(list, func(i, j int) bool { return list[i].ID < list[j].ID })
	if c.Bool("json") {
		return ui.WriteJSON(c, struct {
			Sources []fleetSourceJSON `json:"sources"`
		}{append([]fleetSourceJSON{}, list...)})

	}
	w := c.App.Writer
	if len(list) == 0 {
		fmt.Fprintln(w, "no sources")
		return nil
	}
	fmt.Fprintf(w, "%-32s  %-16s  %-24s  %8s  %10s  %8s  %6s  %-8s  %s\n", "SOURCE", "HOST", "WORKSPACE", "HEAD", "CHECKPOINT", "COSIGNED", "LAG", "SEEN", "ALERTS")
	now := time.Now()
	for _, s := range list {
		fmt.Fprintf(w, "%-32s  %-16s  %-24s  %8d  %10d  %8d  %6d  %-8s  %d\n", s.ID, ui.Clip(printable(orDash(s.Host)), 16), ui.Clip(printable(orDash(s.Workspace)), 24),
			s.HeadSeq, s.Checkpoint, s.Cosigned, s.Lag, ago(now, s.LastSeen), s.Alerts)
	}
	return nil
}

// ago says how long before now an RFC 3339 time was, briefly.
func ago(now time.Time, ts string) string {
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return "-"
	}
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds ago", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	}
	return fmt.Sprintf("%dd ago", int(d.Hours()/24))
}

func runFleetAlerts(c *cli.Context) error {
	if _, err := wantArgs(c, 0, 0, ""); err != nil {
		return err
	}
	store, err := ledgerloc.FleetStore(c)
	if err != nil {
		return err
	}
	src := c.String("source")
	if c.IsSet("source") {
		if err := fleet.CheckLedgerID(src); err != nil {
			return usage.Errorf(c, "--source: %v", err)
		}
	}
	kind := c.String("kind")
	if c.IsSet("kind") && !alertKinds[kind] {
		return usage.Errorf(c, "--kind %q: not an alert kind (see opx fleet alerts --help)", ui.Clip(kind, 40))
	}
	all, err := fleetAlerts(store)
	if err != nil {
		return err
	}
	list := []fleetAlertJSON{}
	for _, a := range all {
		if (src == "" || a.Source == src) && (kind == "" || a.Kind == kind) {
			list = append(list, a)
		}
	}
	if c.Bool("json") {
		return ui.WriteJSON(c, struct {
			Alerts []fleetAlertJSON `json:"alerts"`
		}{list})

	}
	w := c.App.Writer
	if len(list) == 0 {
		fmt.Fprintln(w, "no alerts")
		return nil
	}
	fmt.Fprintf(w, "%-19s  %-32s  %-13s  %8s  %s\n", "TIME", "SOURCE", "KIND", "SEQ", "DETAIL")
	for _, a := range list {
		fmt.Fprintf(w, "%-19s  %-32s  %-13s  %8d  %s\n", shortTime(a.Time), printable(a.Source), printable(a.Kind), a.Seq, ui.Clip(printable(a.Detail), 100))
	}
	return nil
}

// alertKinds are the kinds of fleet.alert.
var alertKinds = func() map[string]bool {
	m := map[string]bool{}
	for _, k := range event.AlertKinds {
		m[k] = true
	}
	return m
}()

// fleetSessionJSON is a session of one source in `opx fleet sessions --json`.
type fleetSessionJSON struct {
	Source string `json:"source"`
	sessionJSON
}

func runFleetSessions(c *cli.Context) error {
	if _, err := wantArgs(c, 0, 0, ""); err != nil {
		return err
	}
	store, err := ledgerloc.FleetStore(c)
	if err != nil {
		return err
	}
	var ids []string
	if id := c.String("source"); c.IsSet("source") {
		if err := fleet.CheckLedgerID(id); err != nil {
			return usage.Errorf(c, "--source: %v", err)
		}
		ids = []string{id}
	} else if ids, err = storeSourceIDs(store); err != nil {
		return err
	}
	list := []fleetSessionJSON{}
	var failed []error
	for _, id := range ids {
		ss, err := sessionsAt(c, SourceLedgerPath(store, id), true)
		if err != nil {
			// One damaged or unreadable mirror hides no other source:
			// listed below the others, and the exit code says so.
			failed = append(failed, fmt.Errorf("source %s: %w", id, err))
			continue
		}
		for _, s := range ss {
			list = append(list, fleetSessionJSON{Source: id, sessionJSON: s})
		}
	}
	sort.SliceStable(list, func(i, j int) bool {
		if list[i].Updated != list[j].Updated {
			return list[i].Updated > list[j].Updated
		}
		return list[i].Source < list[j].Source
	})
	list, hidden := hideOTR(list, c.Bool("include-otr"))
	if err := printFleetSessions(c, list, hidden); err != nil {
		return err
	}
	return errors.Join(failed...)
}

func printFleetSessions(c *cli.Context, list []fleetSessionJSON, hidden int) error {
	if c.Bool("json") {
		return ui.WriteJSON(c, struct {
			Sessions  []fleetSessionJSON `json:"sessions"`
			OTRHidden int                `json:"otr_hidden"`
		}{list, hidden})

	}
	w := c.App.Writer
	defer printOTRHidden(w, hidden)
	if len(list) == 0 {
		fmt.Fprintln(w, "no sessions")
		return nil
	}
	fmt.Fprintf(w, "%-32s  %-22s  %-19s  %8s  %-*s  %s\n", "SOURCE", "SESSION", "UPDATED", "MESSAGES", modeWidth, "MODE", "TITLE")
	for _, s := range list {
		fmt.Fprintf(w, "%-32s  %-22s  %-19s  %8d  %-*s  %s\n", s.Source, s.ID, shortTime(s.Updated), s.Messages, modeWidth, modeColumn(s.Mode), ui.Clip(printable(event.Display(s.Title)), 50))
	}
	return nil
}

// maxStoreSources bounds the sources a listing reads from a store's
// directory (a store is the operator's, but its directory is not a
// place to trust the size of).
const maxStoreSources = 1 << 20

// storeSourceIDs lists the source ledgers a store holds: the directories
// of STORE/sources named by a ledger id with a ledger.db, sorted.
func storeSourceIDs(store string) ([]string, error) {
	dir := filepath.Join(store, "sources")
	f, err := os.Open(dir)
	if errors.Is(err, fs.ErrNotExist) {
		if _, serr := os.Stat(store); serr != nil {
			return nil, fmt.Errorf("collector store: %w", serr)
		}
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("collector store: %w", err)
	}
	defer f.Close()
	var ids []string
	for len(ids) < maxStoreSources {
		names, err := f.Readdirnames(1024)
		for _, n := range names {
			if fleet.CheckLedgerID(n) != nil {
				continue
			}
			if fi, err := os.Stat(filepath.Join(dir, n, "ledger.db")); err == nil && fi.Mode().IsRegular() {
				ids = append(ids, n)
			}
		}
		if err == io.EOF || len(names) == 0 {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("collector store: %w", err)
		}
	}
	sort.Strings(ids)
	return ids, nil
}

// printable is s for a terminal: what a source says of itself (host,
// workspace) and what alerts quote of its messages is outside input, so
// control characters (an escape sequence would rewrite the screen) and
// invalid UTF-8 show as '?'.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r == utf8.RuneError || unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || (r >= '\u202a' && r <= '\u202e') || (r >= '\u2066' && r <= '\u2069') {
			return '?'
		}
		return r
	}, s)
}
