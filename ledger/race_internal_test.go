//go:build race

package ledger

// raceDetector is whether the tests run under -race, where the mutation
// sweeps take a quarter of their budget: they compare single-goroutine
// code with a reference, which the race detector has nothing to find in
// but slows some tenfold, and their draw varies from run to run.
const raceDetector = true
