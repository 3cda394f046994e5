package witness

import "errors"

// Errors of configuring the witnesses.
var (
	// ErrConfig is returned by New for a witness whose URL or key does not
	// parse, or one listed twice.
	ErrConfig = errors.New("witness config")
)
