package cli

import "github.com/opx-dev/opx/ledger"

// WriteOptionsForTest are the options opx opens ledgers for writing with.
func WriteOptionsForTest() ledger.Options { return writeOptions() }
