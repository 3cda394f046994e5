//go:build race

package ledger_test

// raceEnabled: the race detector multiplies memory use, so the hostile
// tests do not hold the children to hostileMaxRSS under it.
const raceEnabled = true
