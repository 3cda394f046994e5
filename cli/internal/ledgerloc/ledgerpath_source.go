package ledgerloc

import (
	"os"
	"path/filepath"

	"github.com/opx-dev/opx/cli/internal/usage"
	"github.com/opx-dev/opx/fleet"
	"github.com/urfave/cli/v2"
)

// EnvFleetStore names the environment variable giving the fleet
// collector's store directory when --store is not given.
const EnvFleetStore = "OPX_FLEET_STORE"

// FleetStore is the collector store c names: --store, else $OPX_FLEET_STORE.
func FleetStore(c *cli.Context) (string, error) {
	dir, ok := usage.FlagGiven(c, "store")
	if ok && dir == "" {
		return "", usage.Errorf(c, "--store needs a directory")
	}
	if !ok {
		dir = os.Getenv(EnvFleetStore)
	}
	if dir == "" {
		return "", usage.Errorf(c, "which collector store? give --store DIR or set $%s", EnvFleetStore)
	}
	return dir, nil
}

// sourceLedger is the path of the collector's mirror of source ledger id:
// STORE/sources/<id>/ledger.db, an ordinary opx ledger that review
// commands open like any other (through the collector while it runs, as
// through an engine). --source names the ledger, so a --ledger beside it
// is a usage error, and so is a --workspace unless the command takes it
// for where files go (rollback, diff, report).
func sourceLedger(c *cli.Context, id string, workspaceNamesLedger bool) (string, error) {
	if err := fleet.CheckLedgerID(id); err != nil {
		return "", usage.Errorf(c, "--source: %v", err)
	}
	if _, ok := usage.FlagGiven(c, "ledger"); ok {
		return "", usage.Errorf(c, "--source and --ledger both name a ledger; give one of them")
	}
	if _, ok := usage.FlagGiven(c, "workspace"); ok && workspaceNamesLedger {
		return "", usage.Errorf(c, "--source and --workspace both name a ledger; give one of them")
	}
	store, err := FleetStore(c)
	if err != nil {
		return "", err
	}
	return SourceLedgerPath(store, id), nil
}

// SourceLedgerPath is where a collector store keeps source id's mirror.
func SourceLedgerPath(store, id string) string {
	return filepath.Join(store, "sources", id, "ledger.db")
}

// Named reports whether c names its ledger file outright (--ledger
// or --source) rather than through a workspace: such a command never asks
// the workspace's engine in place of the file (it could be serving
// another ledger, and a rollback there would touch the wrong workspace).
func Named(c *cli.Context) bool {
	_, l := usage.FlagGiven(c, "ledger")
	_, s := usage.FlagGiven(c, "source")
	return l || s
}
