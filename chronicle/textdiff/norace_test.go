//go:build !race

package textdiff_test

// raceEnabled is true under the race detector, which slows the search
// loops several times over.
const raceEnabled = false
