//go:build !race

package ledger_test

const raceEnabled = false
