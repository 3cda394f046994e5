package llm

import (
	"errors"
	"fmt"
	"time"
)

var (
	// ErrMalformed is returned when a response stream does not parse.
	ErrMalformed = errors.New("malformed model response")
	// ErrTruncated is returned when a response stream ends before the
	// provider's end marker.
	ErrTruncated = errors.New("model response ended early")
	// ErrConfig is returned for a provider configuration that cannot work.
	ErrConfig = errors.New("invalid provider configuration")
	// ErrNoScript is returned by the scripted provider when its transcript
	// has no turn for a message.
	ErrNoScript = errors.New("transcript has no turn for this message")
)

// HTTPError is a non-2xx answer from a provider.
type HTTPError struct {
	Status     int
	RetryAfter time.Duration // from Retry-After, 0 if absent
	Body       string        // first KiB of the body, for the record
}

func (e *HTTPError) Error() string {
	if e.RetryAfter > 0 {
		return fmt.Sprintf("provider answered %d (retry after %s): %s", e.Status, e.RetryAfter, e.Body)
	}
	return fmt.Sprintf("provider answered %d: %s", e.Status, e.Body)
}

// Retryable reports whether the call may succeed if tried again: rate
// limits and server errors.
func (e *HTTPError) Retryable() bool {
	return e.Status == 429 || e.Status == 408 || e.Status >= 500
}
