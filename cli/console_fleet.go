package cli

import (
	"context"
	"flag"
	"fmt"
	"sort"

	"github.com/opx-dev/opx/cli/internal/console"
	"github.com/opx-dev/opx/cli/internal/ledgerloc"
	"github.com/urfave/cli/v2"
)

// consoleFleet is the collector store `opx serve --store DIR` shows, read
// by the code of `opx fleet sources` and `opx fleet alerts`; each source
// is shown by a consoleSource of `--source ID --store DIR`.
type consoleFleet struct {
	c     *cli.Context
	store string
}

func newConsoleFleet(c *cli.Context) (*consoleFleet, error) {
	store, err := ledgerloc.FleetStore(c)
	if err != nil {
		return nil, err
	}
	if _, err := fleetSources(store); err != nil {
		return nil, fmt.Errorf("store %s: %w", store, err)
	}
	return &consoleFleet{c: c, store: store}, nil
}

func (f *consoleFleet) About() console.About { return console.About{Path: f.store, LedgerID: "fleet"} }

func (f *consoleFleet) Sources(ctx context.Context) ([]console.FleetSource, error) {
	list, err := fleetSources(f.store)
	if err != nil {
		return nil, err
	}
	sort.Slice(list, func(i, j int) bool { return list[i].ID < list[j].ID })
	out := make([]console.FleetSource, len(list))
	for i, s := range list {
		out[i] = console.FleetSource{ID: s.ID, Host: s.Host, Workspace: s.Workspace, HasMirror: s.HasMirror, HeadSeq: s.HeadSeq,
			HeadHash: s.HeadHash, Checkpoint: s.Checkpoint, Cosigned: s.Cosigned, Lag: s.Lag, LastSeen: s.LastSeen,
			Held: s.Held, Dropped: s.Dropped, Alerts: s.Alerts, Stalled: s.Stalled}
	}
	return out, nil
}

func (f *consoleFleet) Alerts(ctx context.Context) ([]console.FleetAlert, error) {
	list, err := fleetAlerts(f.store)
	if err != nil {
		return nil, err
	}
	out := make([]console.FleetAlert, len(list))
	for i, a := range list {
		out[i] = console.FleetAlert{Time: a.Time, Source: a.Source, Kind: a.Kind, Seq: a.Seq, Detail: a.Detail}
	}
	return out, nil
}

// Source is the console of source id: a consoleSource whose flags are
// serve's own with --source ID --store DIR, as if the command had been
// `opx serve --source ID --store DIR`.
func (f *consoleFleet) Source(id string) (console.Source, error) {
	set := flag.NewFlagSet(f.c.Command.Name, flag.ContinueOnError)
	for _, fl := range f.c.Command.Flags {
		if err := fl.Apply(set); err != nil {
			return nil, err
		}
	}
	for _, kv := range [][2]string{{"store", f.store}, {"source", id}} {
		if err := set.Set(kv[0], kv[1]); err != nil {
			return nil, err
		}
	}
	var parent *cli.Context
	if l := f.c.Lineage(); len(l) > 1 {
		parent = l[1]
	}
	cc := cli.NewContext(f.c.App, set, parent)
	cc.Command, cc.Context = f.c.Command, f.c.Context
	return newConsoleSource(cc)
}
