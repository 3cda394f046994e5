package fdlimit

import "fmt"

// Result is what Raise found and did.
type Result struct {
	// Supported is false where Raise does nothing (not Linux).
	Supported bool
	// Old and New are the soft limit before and after; Max is the hard
	// limit. New == Old when nothing changed.
	Old, New, Max uint64
}

// Raised reports whether Raise changed the soft limit.
func (r Result) Raised() bool { return r.New != r.Old }

// String says what Raise did, for a log line.
func (r Result) String() string {
	switch {
	case !r.Supported:
		return "open files: limit left as the system set it"
	case r.Raised():
		return fmt.Sprintf("open files: raised %d → %d", r.Old, r.New)
	case r.New >= r.Max:
		return fmt.Sprintf("open files: %d (the hard limit)", r.New)
	default:
		return fmt.Sprintf("open files: %d (hard limit %d)", r.New, r.Max)
	}
}
