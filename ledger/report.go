package ledger

import (
	"container/heap"
	"fmt"
	"sort"
)

// MaxListedFailures is how many failures a Report lists in full: the first
// ones found, by seq (then kind). Every failure found beyond them is still
// counted, in FailuresOmitted and in FailureCounts by kind, so a hostile
// input of millions of broken lines costs a bounded report, not memory in
// proportion to the input.
const MaxListedFailures = 1000

// Report is the outcome of a verification. Its JSON form is normative
// (`opx ledger verify --json`): ok, entries, head_seq, head_hash and
// failures; when more than MaxListedFailures are found, failures lists
// the first of them and failures_omitted and failure_counts (by kind, of
// all found) are added.
type Report struct {
	OK       bool              `json:"ok"`
	Entries  uint64            `json:"entries"`
	HeadSeq  uint64            `json:"head_seq"`
	HeadHash string            `json:"head_hash"`
	Failures []*IntegrityError `json:"failures"`
	// FailuresOmitted counts the failures found but not listed in
	// Failures (beyond MaxListedFailures); absent when all are listed.
	FailuresOmitted uint64 `json:"failures_omitted,omitempty"`
	// FailureCounts counts every failure found, listed or not, by kind;
	// present only when some are omitted (else Failures has them all).
	FailureCounts map[Kind]uint64 `json:"failure_counts,omitempty"`
	// TreeUnchecked counts recorded tree roots that could not be compared:
	// in a segment given no tree range for its start, or after a gap.
	TreeUnchecked uint64 `json:"tree_unchecked,omitempty"`

	kept failureHeap // the smallest failures so far, while collecting
}

// add records a failure: it is counted, and kept if it is among the
// MaxListedFailures first by (seq, kind).
func (r *Report) add(f *IntegrityError) {
	if r.FailureCounts == nil {
		r.FailureCounts = map[Kind]uint64{}
	}
	r.FailureCounts[f.Kind]++
	if len(r.kept) < MaxListedFailures {
		heap.Push(&r.kept, f)
		return
	}
	r.FailuresOmitted++
	if failureLess(f, r.kept[0]) {
		r.kept[0] = f
		heap.Fix(&r.kept, 0)
	}
}

// count records n failures of kind that are not listed.
func (r *Report) count(kind Kind, n uint64) {
	if r.FailureCounts == nil {
		r.FailureCounts = map[Kind]uint64{}
	}
	r.FailureCounts[kind] += n
	r.FailuresOmitted += n
}

// Total returns the number of failures found, listed or not.
func (r *Report) Total() uint64 {
	var n uint64
	for _, c := range r.FailureCounts {
		n += c
	}
	if n == 0 {
		n = uint64(len(r.Failures)) // a report built by hand
	}
	return n
}

// Err returns nil for a clean report, else an error wrapping ErrIntegrity
// that names the first failure and the count.
func (r *Report) Err() error {
	if len(r.Failures) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %d failure(s), first: %v", ErrIntegrity, r.Total(), r.Failures[0])
}

// Kinds returns the distinct failure kinds found, sorted.
func (r *Report) Kinds() []Kind {
	seen := map[Kind]bool{}
	var out []Kind
	for k := range r.FailureCounts {
		seen[k] = true
		out = append(out, k)
	}
	for _, f := range r.Failures {
		if !seen[f.Kind] {
			seen[f.Kind] = true
			out = append(out, f.Kind)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// finish moves the kept failures (and any appended to Failures directly)
// into Failures, sorted by seq then kind, at most MaxListedFailures of
// them, and sets OK.
func (r *Report) finish() {
	extra := r.Failures
	r.Failures = nil
	for _, f := range extra {
		r.add(f)
	}
	out := make([]*IntegrityError, len(r.kept))
	copy(out, r.kept)
	r.kept = nil
	sort.SliceStable(out, func(i, j int) bool { return failureLess(out[i], out[j]) })
	r.Failures = out
	r.OK = len(r.Failures) == 0
	if r.FailuresOmitted == 0 {
		r.FailureCounts = nil // the list is complete: the DESIGN shape
	}
}

func failureLess(a, b *IntegrityError) bool {
	if a.Seq != b.Seq {
		return a.Seq < b.Seq
	}
	if a.Kind != b.Kind {
		return a.Kind < b.Kind
	}
	return a.Detail < b.Detail
}

// failureHeap is a max-heap by (seq, kind): its root is the failure to
// drop when a smaller one arrives.
type failureHeap []*IntegrityError

func (h failureHeap) Len() int           { return len(h) }
func (h failureHeap) Less(i, j int) bool { return failureLess(h[j], h[i]) }
func (h failureHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *failureHeap) Push(x any)        { *h = append(*h, x.(*IntegrityError)) }
func (h *failureHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
