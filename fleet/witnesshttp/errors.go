package witnesshttp

import (
	"errors"
	"fmt"
)

// Errors a Witness returns from AddCheckpoint, each mapped to the
// protocol's status code. A malformed note or body wraps
// tlog.ErrMalformed (400).
var (
	// ErrUnknownOrigin is returned for a checkpoint of an origin the
	// witness has no key for (404).
	ErrUnknownOrigin = errors.New("unknown origin")
	// ErrNoSignature is returned when no signature of a key trusted for
	// the origin verifies, or one of a trusted key's name and hash does
	// not (403).
	ErrNoSignature = errors.New("no valid signature of a trusted key")
	// ErrOldSize is returned when the old size is above the checkpoint's
	// size (400).
	ErrOldSize = errors.New("old size is larger than the checkpoint's")
	// ErrBadProof is returned when the consistency proof does not prove
	// the checkpoint extends the latest one cosigned, a proof is sent
	// with old size 0 or with the checkpoint's own size, a tree of size 0
	// has a root other than the empty tree's, or the checkpoint is not
	// the tree the witness knows the log has at its size otherwise (the
	// collector's mirror of the source) (422).
	ErrBadProof = errors.New("checkpoint is not consistent with the one cosigned")
)

// ConflictError is returned when the old size is not the size of the
// latest checkpoint the witness cosigned for the origin, or (Root) when
// it is and the checkpoint is of that size with another root (409: with
// Latest as a tlog.ContentTypeSize body for the first; a text/plain body
// for the second, as omniwitness answers and transparency-dev's client
// reads it).
type ConflictError struct {
	Latest uint64
	Root   bool
}

func (e *ConflictError) Error() string {
	if e.Root {
		return fmt.Sprintf("the tree of size %d was cosigned with another root", e.Latest)
	}
	return fmt.Sprintf("old size is not the latest cosigned size %d", e.Latest)
}
