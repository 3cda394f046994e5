package cli

import (
	"github.com/opx-dev/opx/chronicle"
	"github.com/opx-dev/opx/engine/executor"
	"github.com/opx-dev/opx/engine/undo"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/tlog"
)

// WriteOptionsForTest are the options opx opens ledgers for writing with.
func WriteOptionsForTest() ledger.Options { return writeOptions() }

// SetRollbackFSForTest wraps the workspace offline rollbacks write into.
func SetRollbackFSForTest(wrap func(chronicle.Workspace) chronicle.Workspace) {
	rollbackFS = func(w *executor.Workspace) chronicle.Workspace { return wrap(undo.WorkspaceFS(w)) }
}

// ProveLatestForTest is `opx ledger prove SEQ` on an open ledger: the
// latest signed checkpoint found and checked, the proof built and
// checked.
func ProveLatestForTest(l *ledger.Ledger, seq uint64) (*tlog.Proof, error) {
	sc, err := latestSigned(l)
	if err != nil {
		return nil, err
	}
	return buildProof(l, seq, sc)
}

// SetEngineProgramForTest sets the opx binary attachEngine starts an
// engine with (a test binary would run its tests); restore undoes it.
func SetEngineProgramForTest(path string) (restore func()) {
	old := engineProgram
	engineProgram = func() (string, error) { return path, nil }
	return func() { engineProgram = old }
}
