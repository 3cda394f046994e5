package ledger

import (
	"errors"
	"fmt"
)

// Errors when opening or creating a ledger.
var (
	// ErrExists is returned by Create when the file already exists.
	ErrExists = errors.New("ledger already exists")
	// ErrNotExist is returned by Open when the file does not exist.
	ErrNotExist = errors.New("ledger does not exist")
	// ErrNotLedger is returned when a file is not an opx ledger (not bbolt,
	// or bbolt without the opx buckets and format).
	ErrNotLedger = errors.New("not an opx ledger")
	// ErrUnreadable is returned by Open and OpenReadOnly for a bbolt file
	// that is damaged: cut short (its meta pages name pages the file does
	// not hold), meta pages that do not validate, or a page that faults or
	// panics when read. Reading such a file through its memory map would
	// crash the process (SIGBUS), so it is refused before bbolt maps it.
	// errors.Is(ErrUnreadable, ErrNotLedger) is true.
	ErrUnreadable error = unreadableError{}
	// ErrFormat is returned when the ledger's format is not opx-ledger/1.
	ErrFormat = errors.New("unsupported ledger format")
	// ErrLocked is returned when another process (normally the running
	// engine) holds the file's lock.
	ErrLocked = errors.New("ledger is locked by another process")
	// ErrInconsistent is returned by Open for writing when the stored head
	// does not match the last entry: appending would extend a broken chain.
	ErrInconsistent = errors.New("ledger head does not match its last entry")
)

// Errors when appending.
var (
	// ErrClosed is returned by Append after Close.
	ErrClosed = errors.New("ledger is closed")
	// ErrReadOnly is returned by Append on a ledger opened read-only.
	ErrReadOnly = errors.New("ledger is open read-only")
	// ErrBroken is returned by every Append after a commit failed. The
	// ledger stays failed (sticky) until it is closed and reopened, so
	// no entry is ever chained onto state that may not be on disk.
	ErrBroken = errors.New("ledger writer failed earlier; refusing further appends")
	// ErrInvalidRecord is returned for a record that cannot become an entry
	// (empty type, data not a JSON object, floats in data, ...).
	ErrInvalidRecord = errors.New("invalid record")
)

// Errors when exporting.
var (
	// ErrEntryTooLarge is returned by ExportTiles when an entry of the
	// tree is over MaxBundledEntry bytes: no entry bundle can hold it, and
	// a static tree without it would not be one that clients can read in
	// full.
	ErrEntryTooLarge = errors.New("entry too large for a tlog-tiles entry bundle")
)

// Errors when reading.
var (
	// ErrNotExport is returned (wrapped) by VerifyExport and Import for a
	// file that is not an export at all (a README, a binary): its first
	// line names none of an entry's members and no manifest says it is
	// one. A real export with a damaged line is an integrity finding
	// (ErrIntegrity) instead.
	ErrNotExport = errors.New("not an opx export")
	// ErrNotFound is returned when an entry or blob is not stored.
	ErrNotFound = errors.New("not found")
	// ErrBlobCorrupt is returned when a stored blob does not decompress or
	// does not hash to its key.
	ErrBlobCorrupt = errors.New("blob corrupt")
	// ErrIntegrity is returned (wrapped) when verification or import finds
	// integrity failures; the report carries each one.
	ErrIntegrity = errors.New("integrity failure")
)

// Kind names a class of integrity failure. The values are normative.
type Kind string

// The integrity failure kinds of opx-ledger/1.
const (
	KindHashMismatch Kind = "hash-mismatch"
	KindGap          Kind = "gap"
	KindSeqMismatch  Kind = "seq-mismatch"
	KindNotCanonical Kind = "not-canonical"
	KindHeadMismatch Kind = "head-mismatch"
	KindMissingBlob  Kind = "missing-blob"
	KindBlobCorrupt  Kind = "blob-corrupt"
	KindUnreadable   Kind = "unreadable"
	// KindCausality extends DESIGN's list: entries that are each intact but
	// out of causal order (an execution without its allowing verdict),
	// found by --strict through VerifyOptions.CheckOrder.
	KindCausality Kind = "causality"
	// KindTreeMismatch extends DESIGN's list: the Merkle tree the entries
	// give differs from what the ledger holds: a stored tile (a hash
	// changed, a tile missing, cut short or extra) or a recorded root
	// (ledger.checkpoint tree_size/tree_root, ledger.tree_built).
	KindTreeMismatch Kind = "tree-mismatch"
	// KindCheckpoint extends DESIGN's list: a ledger.checkpoint whose tree
	// is right but which VerifyOptions.CheckCheckpoint refused (its
	// signed note does not verify, or names another tree).
	KindCheckpoint Kind = "checkpoint"
	// KindNotExtension extends DESIGN's list: the ledger is not an
	// append-only extension of a checkpoint saved earlier (verify
	// --since): its tree does not contain that checkpoint's tree, by a
	// consistency proof checked against the root recomputed from the
	// entries, so it was rewritten, truncated or forked since, however
	// consistent its chain is with itself.
	KindNotExtension Kind = "not-extension"
)

// IntegrityError is one integrity finding: where (Seq), what kind, and,
// where a value was compared, what was expected and what was found.
type IntegrityError struct {
	Seq      uint64 `json:"seq"`
	Kind     Kind   `json:"kind"`
	Detail   string `json:"detail"`
	Expected string `json:"-"`
	Found    string `json:"-"`
}

func (e *IntegrityError) Error() string {
	return fmt.Sprintf("seq %d: %s: %s", e.Seq, e.Kind, e.Detail)
}

// Is makes errors.Is(err, ErrIntegrity) true for every finding, and
// errors.Is(err, ErrBlobCorrupt) true for blob findings.
func (e *IntegrityError) Is(target error) bool {
	return target == ErrIntegrity || (target == ErrBlobCorrupt && e.Kind == KindBlobCorrupt)
}

// unreadableError is ErrUnreadable: a kind of ErrNotLedger.
type unreadableError struct{}

func (unreadableError) Error() string        { return "not a readable ledger" }
func (unreadableError) Is(target error) bool { return target == ErrNotLedger }
