package rerun

import (
	"errors"
	"fmt"

	"github.com/opx-dev/opx/ledger"
)

// Reading a record.
var (
	// ErrNoSession is returned by Load for a session the ledger has no
	// session.created entry for.
	ErrNoSession = errors.New("no such session")
	// ErrNotReplayable is returned (wrapped) when the record lacks
	// something a rerun needs, such as the text of the policy in force.
	ErrNotReplayable = errors.New("the record does not hold what a rerun needs")
)

// Comparing.
var (
	// ErrDiverged is returned (wrapped) when a rerun produced other
	// events than the record holds. It is an integrity finding: errors.Is
	// it with ledger.ErrIntegrity holds.
	ErrDiverged = fmt.Errorf("the rerun diverged from the record: %w", ledger.ErrIntegrity)
)
