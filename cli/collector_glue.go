package cli

import (
	"context"
	"errors"

	"github.com/urfave/cli/v2"
)

// The collector's package (fleet/collector) is built on branch i17-coll;
// until it is merged these say so.

var errNoCollector = errors.New("collector: not built into this opx yet")

func runCollectorService(ctx context.Context, c *cli.Context, s *collectorSetup) error {
	return errNoCollector
}

func collectorWitnessKey(store string) (string, error) { return "", errNoCollector }

func fleetSources(store string) ([]fleetSourceJSON, error) { return nil, errNoCollector }

func fleetAlerts(store string) ([]fleetAlertJSON, error) { return nil, errNoCollector }
