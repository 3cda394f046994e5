package cli

import (
	"context"
	"fmt"
	"os"
	"sort"

	"github.com/urfave/cli/v2"

	"github.com/opx-dev/opx/fleet/collector"
	"github.com/opx-dev/opx/fleet/witnesshttp"
	"github.com/opx-dev/opx/ledger/tlog"
)

// runCollectorService runs the collector (fleet/collector) until ctx ends.
func runCollectorService(ctx context.Context, c *cli.Context, s *collectorSetup) error {
	opts, err := s.cfg.natsOptions()
	if err != nil {
		return err
	}
	opts = append(opts, s.natsOpts...)
	var allow []string
	allowByID := map[string][]string{} // keys named by a team's origin (ledger.origin)
	for id, k := range s.cfg.AllowKeys {
		if v, err := tlog.ParseVerifierKey(k); err == nil && v.Name() != tlog.Origin(id) {
			allowByID[id] = append(allowByID[id], k)
			continue
		}
		allow = append(allow, k)
	}
	sort.Strings(allow)
	errw := c.App.ErrWriter
	col, err := collector.New(collector.Config{URL: s.url, NATSOptions: opts, Prefix: s.prefix, Store: s.store,
		Durable: s.cfg.Durable, Replicas: s.cfg.Replicas, StallAfter: s.stallAfter, AllowKeys: allow, AllowSourceKeys: allowByID, MaxSources: s.cfg.MaxSources,
		WitnessListen: s.witnessListen, WitnessLogs: s.witnessLogs,
		WitnessHTTP: witnesshttp.Options{Rate: s.witnessRate, Burst: max(1, int(2*s.witnessRate)),
			ClientRate: s.witnessClient, ClientBurst: max(1, int(2*s.witnessClient))},
		WitnessServe: witnesshttp.ServeConfig{TLS: s.witnessTLS},
		// What it logs may quote what sources sent: no control
		// characters reach the operator's terminal or log.
		Logf: func(format string, args ...any) { fmt.Fprintln(errw, printable(fmt.Sprintf(format, args...))) }})
	if err != nil {
		return err
	}
	defer col.Close()
	fmt.Fprintf(errw, "collector: store %s, subjects %s.ledger.*, witness key %s\n", s.store, s.prefix, col.WitnessKey())
	if err := col.Run(ctx); err != nil && ctx.Err() == nil {
		return err
	}
	return nil
}

// collectorWitnessKey is the store's witness verifier key, the key
// created (with the store directory) on first use.
func collectorWitnessKey(store string) (string, error) {
	if err := os.MkdirAll(store, 0o700); err != nil {
		return "", fmt.Errorf("collector store: %w", err)
	}
	w, err := collector.LoadWitness(store, "")
	if err != nil {
		return "", err
	}
	return w.VKey, nil
}

func fleetSources(store string) ([]fleetSourceJSON, error) {
	st, err := collector.OpenStore(store)
	if err != nil {
		return nil, err
	}
	list, err := st.Sources()
	if err != nil {
		return nil, err
	}
	out := make([]fleetSourceJSON, 0, len(list))
	for _, s := range list {
		j := fleetSourceJSON{ID: s.ID, Host: s.Host, Workspace: s.Workspace, HasMirror: s.HasMirror, HeadSeq: s.HeadSeq, HeadHash: s.HeadHash,
			Claimed: s.ClaimedHead, Checkpoint: s.Checkpoint, Cosigned: s.Cosigned, LastSeen: s.LastSeen, LagSeconds: s.LagSeconds,
			Held: s.Held, Dropped: s.Dropped, Alerts: s.Alerts, Stalled: s.Stalled, Path: s.Path}
		if s.ClaimedHead > s.HeadSeq {
			j.Lag = s.ClaimedHead - s.HeadSeq
		}
		out = append(out, j)
	}
	return out, nil
}

func fleetAlerts(store string) ([]fleetAlertJSON, error) {
	st, err := collector.OpenStore(store)
	if err != nil {
		return nil, err
	}
	list, err := st.Alerts()
	if err != nil {
		return nil, err
	}
	out := make([]fleetAlertJSON, 0, len(list))
	for _, a := range list {
		out = append(out, fleetAlertJSON{Time: a.Time, Source: a.Source, Kind: a.Kind, Seq: a.SourceSeq, Detail: a.Detail})
	}
	return out, nil
}
