package tier2

import (
	"time"

	"github.com/opx-dev/opx/ledger"
)

// CountCallsForTest counts the tier 2 requests recorded since since
// (countTier2Calls).
func CountCallsForTest(l *ledger.Ledger, since time.Time) (int, error) {
	return countTier2Calls(l, since)
}

// DayStartForTest is the start of t's UTC day.
func DayStartForTest(t time.Time) time.Time { return dayStart(t) }

// SetNowForTest replaces the evaluator's clock.
func (e *LLMEvaluator) SetNowForTest(now func() time.Time) { e.now = now }
