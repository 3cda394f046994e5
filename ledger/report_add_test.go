package ledger_test

import (
	"testing"

	"github.com/opx-dev/opx/ledger"
)

// TestReport_AddFailure: a finding added beside Verify is listed in order
// and counted, and the report is no longer OK, whether or not the report
// had to omit failures.
func TestReport_AddFailure(t *testing.T) {
	r := &ledger.Report{OK: true, Entries: 10}
	r.AddFailure(&ledger.IntegrityError{Seq: 7, Kind: ledger.KindNotExtension, Detail: "x"})
	if r.OK || len(r.Failures) != 1 || r.Total() != 1 || r.Err() == nil {
		t.Fatalf("clean report + 1: %+v", r)
	}
	r.AddFailure(&ledger.IntegrityError{Seq: 3, Kind: ledger.KindHashMismatch, Detail: "y"})
	if len(r.Failures) != 2 || r.Failures[0].Seq != 3 || r.Total() != 2 {
		t.Fatalf("two findings out of order: %+v", r.Failures)
	}

	full := &ledger.Report{FailuresOmitted: 5, FailureCounts: map[ledger.Kind]uint64{ledger.KindHashMismatch: ledger.MaxListedFailures + 5}}
	for i := 0; i < ledger.MaxListedFailures; i++ {
		full.Failures = append(full.Failures, &ledger.IntegrityError{Seq: uint64(i), Kind: ledger.KindHashMismatch})
	}
	full.AddFailure(&ledger.IntegrityError{Seq: 0, Kind: ledger.KindNotExtension})
	if full.OK || len(full.Failures) != ledger.MaxListedFailures || full.FailuresOmitted != 6 ||
		full.FailureCounts[ledger.KindNotExtension] != 1 || full.Total() != ledger.MaxListedFailures+6 {
		t.Fatalf("a report that omits failures + 1: omitted %d, counts %v, listed %d", full.FailuresOmitted, full.FailureCounts, len(full.Failures))
	}
	found := false
	for _, f := range full.Failures {
		found = found || f.Kind == ledger.KindNotExtension
	}
	if !found {
		t.Error("the not-extension finding at seq 0 is not listed")
	}
}
