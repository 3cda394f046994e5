package hookproto

import "errors"

// Reading.
var (
	// ErrTooLarge is returned by Decode when stdin holds more than
	// MaxEventBytes.
	ErrTooLarge = errors.New("hook event too large")

	// ErrRead is returned by Decode when stdin cannot be read.
	ErrRead = errors.New("hook event unreadable")
)

// Decoding.
var (
	// ErrUnknownAgent is returned when an agent name is not claude, codex
	// or gemini.
	ErrUnknownAgent = errors.New("unknown agent")

	// ErrMalformed is returned when the event is not one JSON object of
	// valid UTF-8, is nested too deep, repeats a member name, or gives a
	// known field a value of the wrong type.
	ErrMalformed = errors.New("malformed hook event")

	// ErrBadID is returned when a session, tool-use, turn or prompt id is
	// missing where required, too long or holds a character outside
	// [A-Za-z0-9._:-].
	ErrBadID = errors.New("bad id in hook event")

	// ErrBadPath is returned when cwd, the project directory or the
	// transcript path is missing where required, relative, not clean,
	// too long or holds a control character.
	ErrBadPath = errors.New("bad path in hook event")

	// ErrBadField is returned when a short text field (event name, tool
	// name, model, permission mode, ...) is too long or holds a control
	// character, or a pre- or post-tool event names no tool.
	ErrBadField = errors.New("bad field in hook event")
)

// Encoding.
var (
	// ErrUnsupported is returned by Encode for an answer the CLI cannot
	// take for that event (Codex has no "ask"; only pre-tool events are
	// denied, asked or rewritten).
	ErrUnsupported = errors.New("answer not supported by the agent")

	// ErrBadAnswer is returned by Encode for an answer that is not
	// well-formed: an unknown decision, or a rewritten input that is not
	// a JSON object (for Codex, one without a string "command").
	ErrBadAnswer = errors.New("bad hook answer")
)
