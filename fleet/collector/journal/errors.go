package journal

import "errors"

// ErrCorrupt is returned by Replay when a segment other than the last
// holds a record that does not read (a torn tail is only ever the last
// segment's): the journal is left as it is.
var ErrCorrupt = errors.New("journal: corrupt segment")

// ErrClosed is returned when the journal is used after Close, or after a
// write failed (a failed journal stays failed).
var ErrClosed = errors.New("journal: closed or failed")
