package shellx

import "errors"

// Errors an Analysis can hold, wrapped with what happened and where.
var (
	// ErrSyntax is returned when the line, or a shell payload within it,
	// is not valid bash.
	ErrSyntax = errors.New("shellx: cannot parse")
	// ErrTooLong is returned when the line is longer than MaxLineBytes.
	ErrTooLong = errors.New("shellx: line too long")
	// ErrTooDeep is returned when payloads are nested deeper than
	// MaxDepth, or a text nests brackets deeper than maxNesting or holds
	// more | and & than maxOperators.
	ErrTooDeep = errors.New("shellx: nested too deep")
	// ErrTooMany is returned when MaxCommands or MaxLiterals is reached.
	ErrTooMany = errors.New("shellx: too many commands or literals")
	// ErrTooMuchWork is returned when the line needs more work than
	// maxWork: it is cut short rather than read to the end.
	ErrTooMuchWork = errors.New("shellx: work limit reached")
	// ErrInternal is returned when Parse met a bug (a recovered panic).
	ErrInternal = errors.New("shellx: internal error")
)
