package cli

import (
	"github.com/opx-dev/opx/cli/internal/ledgerloc"
	"github.com/opx-dev/opx/cli/internal/liveledger"
	"github.com/opx-dev/opx/ledger"
	"github.com/urfave/cli/v2"
)

// openReview opens c's ledger read-only for offline review and turns the
// usual failures into messages that say what to do. While an engine holds
// the file it fails with ErrLocked; commands that can read through the
// engine use openReviewOrEngine.
func openReview(c *cli.Context) (*ledger.Ledger, error) {
	path, err := ledgerloc.Path(c)
	if err != nil {
		return nil, err
	}
	if err := ledgerloc.RefuseEmpty(path); err != nil {
		return nil, err
	}
	l, err := ledger.OpenReadOnly(path)
	if err != nil {
		return nil, ledgerloc.ExplainOpen(path, err)
	}
	return l, nil
}

// ledgerReview is a ledger opened for a review command: the file (offline), or,
// while an engine holds it, the engine's ledger, read through its
// LedgerService and checked here. Exactly one of local and remote is set.
type ledgerReview struct {
	path   string // as the user named it
	local  *ledger.Ledger
	remote *liveledger.Ledger
}

func (r *ledgerReview) Close() error {
	if r.local != nil {
		return r.local.Close()
	}
	return r.remote.Close()
}

// openReviewOrEngine opens c's ledger for review, through the running
// engine when one holds the file.
func openReviewOrEngine(c *cli.Context) (*ledgerReview, error) {
	path, err := ledgerloc.Path(c)
	if err != nil {
		return nil, err
	}
	if err := ledgerloc.RefuseEmpty(path); err != nil {
		return nil, err
	}
	l, r, err := liveledger.OpenEngineOrFile(c, path)
	if err != nil {
		return nil, err
	}
	return &ledgerReview{path: path, local: l, remote: r}, nil
}
