package cli

import (
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/replay/projection"
)

// writeOptions are the options every ledger opened for writing gets: the
// projections, kept up to date with each append (and built or caught up
// on open), so that the sessions, history, snapshots, approvals and
// metrics every listing reads are folds of the ledger itself.
func writeOptions() ledger.Options {
	return ledger.Options{Projections: projection.All()}
}
