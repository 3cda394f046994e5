package cli

import (
	"github.com/opx-dev/opx/chronicle"
	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/engine/executor"
	"github.com/opx-dev/opx/ledger"
)

// WriteOptionsForTest are the options opx opens ledgers for writing with.
func WriteOptionsForTest() ledger.Options { return writeOptions() }

// SetRollbackFSForTest wraps the workspace offline rollbacks write into.
func SetRollbackFSForTest(wrap func(chronicle.Workspace) chronicle.Workspace) {
	rollbackFS = func(w *executor.Workspace) chronicle.Workspace { return wrap(engine.WorkspaceFS(w)) }
}
