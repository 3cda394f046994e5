//go:build !race

package ledger

// raceDetector: see race_internal_test.go.
const raceDetector = false
