package replay

import "errors"

// Errors when building a timeline.
var (
	// ErrUnknownSession is returned (wrapped) by Build when no entry up to
	// the seq it reads to belongs to the session.
	ErrUnknownSession = errors.New("unknown session")
)
