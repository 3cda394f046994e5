package mcp

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// The ledger a server can fill. Each of its listings is recorded (up to
// MaxListingBytes), at each start and whenever its tools change; the
// count per start is bounded (maxListings), but a server that restarts
// forever, or lists anew forever, would grow the ledger on disk without
// end. A ListingBudget bounds the bytes of one server's listings over
// time, across its restarts; the Manager bounds its restarts over time.
var (
	// listingBudgetBytes is what a server's recorded listings may take
	// per listingBudgetPer (a token bucket: all of it at once, then
	// refilled at that rate). A server's listing is rarely over 100 KiB.
	listingBudgetBytes int64 = 32 << 20
	listingBudgetPer         = 24 * time.Hour
	// maxRestarts is how many times the Manager restarts a server within
	// restartWindow, however long each instance lived, before it gives
	// up on it (failed until the engine restarts).
	maxRestarts   = 20
	restartWindow = time.Hour
)

// ErrListingBudget is returned when a server's tool listings have used
// their budget: the listing is not recorded, so a start fails and a
// change of tools is ignored.
var ErrListingBudget = errors.New("the MCP server's tool listings used their budget")

// ListingBudget is one server's budget of recorded listing bytes, shared
// by its starts (Spec.ListingBudget). The zero value is not usable: use
// NewListingBudget.
type ListingBudget struct {
	mu     sync.Mutex
	tokens float64
	last   time.Time
}

// NewListingBudget returns a full budget.
func NewListingBudget() *ListingBudget {
	return &ListingBudget{tokens: float64(listingBudgetBytes), last: time.Now()}
}

// take spends n bytes, or fails with ErrListingBudget, spending nothing.
func (b *ListingBudget) take(n int64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	rate := float64(listingBudgetBytes) / listingBudgetPer.Seconds()
	b.tokens = min(float64(listingBudgetBytes), b.tokens+now.Sub(b.last).Seconds()*rate)
	b.last = now
	if float64(n) > b.tokens {
		return fmt.Errorf("%w: a listing of %d bytes, with %d of %d bytes left for %v",
			ErrListingBudget, n, int64(b.tokens), listingBudgetBytes, listingBudgetPer)
	}
	b.tokens -= float64(n)
	return nil
}

// restarts counts a server's restarts within restartWindow.
type restarts struct{ at []time.Time }

// add counts a restart now and says whether it is one too many.
func (r *restarts) add(now time.Time) (tooMany bool) {
	kept := r.at[:0]
	for _, t := range r.at {
		if now.Sub(t) < restartWindow {
			kept = append(kept, t)
		}
	}
	r.at = append(kept, now)
	return len(r.at) > maxRestarts
}
