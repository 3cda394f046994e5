package tlog

import "errors"

// Errors of the signing key.
var (
	// ErrNoKey is returned by LoadKey when the state directory holds no
	// key file. errors.Is(ErrNoKey, fs.ErrNotExist) is false: callers
	// decide whether to create one.
	ErrNoKey = errors.New("no checkpoint key")
	// ErrKeyInsecure is returned by LoadKey for a key file that group or
	// others may access, or that another user owns.
	ErrKeyInsecure = errors.New("checkpoint key file is not private")
	// ErrKeyExists is returned by CreateKey when a key file is already
	// there: a key is never replaced in place.
	ErrKeyExists = errors.New("checkpoint key already exists")
)

// Errors of checking notes and proofs. Each is an integrity finding about
// the input, not an operational failure.
var (
	// ErrMalformed is returned when a note, a proof or a key does not
	// parse: wrong shape, too large, bad base64, wrong hash size.
	ErrMalformed = errors.New("malformed")
	// ErrUnsigned is returned when a checkpoint carries no valid signature
	// of the expected key (signed by another key, a signature that does
	// not verify, or a body changed after signing), or names another
	// origin.
	ErrUnsigned = errors.New("checkpoint is not signed by the key")
	// ErrProof is returned when an inclusion or consistency proof does not
	// prove what it claims.
	ErrProof = errors.New("proof does not verify")
)
