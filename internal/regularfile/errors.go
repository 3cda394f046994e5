package regularfile

import "errors"

var (
	// ErrNotRegular is returned when the path names something other than
	// a regular file (after following symlinks): a directory, FIFO,
	// socket or device.
	ErrNotRegular = errors.New("not a regular file")

	// ErrTooLarge is returned when the file holds more than the caller's
	// bound.
	ErrTooLarge = errors.New("file too large")
)
