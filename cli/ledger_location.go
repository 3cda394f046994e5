package cli

import "github.com/opx-dev/opx/cli/internal/ledgerloc"

// EnvLedger names the environment variable that overrides the default
// ledger path of review commands; ledgerloc resolves it.
const EnvLedger = ledgerloc.EnvLedger

// EnvFleetStore names the environment variable giving the fleet
// collector's store directory when --store is not given.
const EnvFleetStore = ledgerloc.EnvFleetStore

// SourceLedgerPath is where a collector store keeps source id's mirror.
func SourceLedgerPath(store, id string) string { return ledgerloc.SourceLedgerPath(store, id) }
