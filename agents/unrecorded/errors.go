package unrecorded

import "errors"

// Writing.
var (
	// ErrFull is returned by Append when the line would grow the file
	// past MaxFileBytes.
	ErrFull = errors.New("unrecorded-calls file full")
)

// Reading and writing.
var (
	// ErrNotRegular is returned when the path names something other than
	// a regular file (a symlink, a FIFO, a directory, a device).
	ErrNotRegular = errors.New("unrecorded-calls file is not a regular file")

	// ErrTooLarge is returned by Read, with the lines before the bound,
	// when the file holds more than the bound.
	ErrTooLarge = errors.New("unrecorded-calls file too large")
)
