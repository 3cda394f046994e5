// Package replaytest writes hand-built ledgers for the tests of the
// review commands: real ledger files, in the shapes the engine records,
// that a test can plant violations in before writing.
package replaytest
