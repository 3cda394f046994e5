package ledger

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/transparency-dev/merkle/compact"
	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// Format is the ledger format this package reads and writes.
const Format = "opx-ledger/1"

// Bucket and meta key names (normative).
var (
	bucketEntries = []byte("entries")
	bucketMeta    = []byte("meta")
	bucketBlobs   = []byte("blobs")

	metaFormat   = []byte("format")
	metaLedgerID = []byte("ledger_id")
	metaHeadSeq  = []byte("head_seq")
	metaHeadHash = []byte("head_hash")
)

// Entry types the ledger package itself writes.
const (
	TypeGenesis = "ledger.genesis"
	TypeNote    = "ledger.note"
	TypePruned  = "chronicle.pruned"
)

// Options tune Open and Create. The zero value is sensible.
type Options struct {
	// LockTimeout bounds the wait for the file lock; default 200ms.
	LockTimeout time.Duration
	// FlushInterval bounds how long Async entries wait for a group commit;
	// default 2ms.
	FlushInterval time.Duration
	// MaxBatch caps entries per commit; default 8192.
	MaxBatch int
	// Now supplies entry timestamps; default time.Now. Tests and the
	// fixture generator set it to get reproducible ledgers.
	Now func() time.Time
	// NoSync skips fsync (tests and benchmarks of the CPU path only).
	NoSync bool
	// LedgerID, if set, is used by Create instead of a random id (32
	// lowercase hex); only the fixture generator needs reproducible ids.
	LedgerID string
	// Projections are folded into p.<name> buckets in the transaction
	// of every append, and built or caught up on Create and Open (for
	// writing). A read-only open reads what the file holds.
	Projections []Projection

	// SignCheckpoint, if set, is called inside Checkpoint with the tree
	// as of the entry before the checkpoint; the note it returns (a C2SP
	// signed note of that tree) is recorded in the checkpoint. Its error
	// fails the Checkpoint, which then appends nothing.
	SignCheckpoint func(TreeHead) (note string, err error)

	// noTree keeps no Merkle tree: the baseline of the append benchmarks
	// only. Checkpoints then record no tree.
	noTree bool
	// foldBatch, if positive, replaces defaultFoldBatch: tests only, so
	// that a fold across batches needs a few thousand entries, not
	// hundreds of thousands.
	foldBatch int
}

func (o *Options) defaults() {
	if o.LockTimeout <= 0 {
		o.LockTimeout = 200 * time.Millisecond
	}
	if o.FlushInterval <= 0 {
		o.FlushInterval = 2 * time.Millisecond
	}
	if o.MaxBatch <= 0 {
		o.MaxBatch = 8192
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

// Head identifies the last entry of a ledger.
type Head struct {
	LedgerID string `json:"ledger_id"`
	Seq      uint64 `json:"head_seq"`
	Hash     Hash   `json:"head_hash"`
}

// Ledger is an open ledger file. It is safe for concurrent use. Exactly one
// writer may have a file open at a time (bbolt's lock); read-only opens
// share the file with each other but not with a writer.
type Ledger struct {
	db       *bolt.DB
	path     string
	id       string
	readOnly bool
	mirror   bool // entries come from another ledger (mirror.go)
	opts     Options

	w *writer // nil when read-only
}

// DefaultPath returns <state dir>/opx/<workspaceID>/ledger.db, where the
// state dir is $XDG_STATE_HOME or ~/.local/state.
func DefaultPath(workspaceID string) (string, error) {
	dir := os.Getenv("XDG_STATE_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("locate state dir: %w", err)
		}
		dir = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(dir, "opx", workspaceID, "ledger.db"), nil
}

// StateDir is the directory of a workspace's default ledger, where its
// registry entry, client token and the files its hooks write live.
func StateDir(workspace string) (string, error) {
	id, err := WorkspaceID(workspace)
	if err != nil {
		return "", err
	}
	p, err := DefaultPath(id)
	if err != nil {
		return "", err
	}
	return filepath.Dir(p), nil
}

// WorkspaceID names a workspace in the state dir: the first 16 bytes of
// the BLAKE3-256 of its absolute, symlink-resolved path, in hex.
func WorkspaceID(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("workspace id: %w", err)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	h := Sum([]byte(abs))
	return hex.EncodeToString(h[:16]), nil
}

// Create makes a new ledger at path and writes its genesis entry. The
// parent directory is created with mode 0700; the file gets 0600.
func Create(path string, opts Options) (*Ledger, error) {
	opts.defaults()
	if err := checkProjections(opts.Projections); err != nil {
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	if _, err := os.Lstat(path); err == nil {
		return nil, fmt.Errorf("create %s: %w", path, ErrExists)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	id := opts.LedgerID
	if id == "" {
		var err error
		if id, err = newLedgerID(); err != nil {
			return nil, err
		}
	} else if h, err := hex.DecodeString(id); err != nil || len(h) != 16 || hex.EncodeToString(h) != id {
		return nil, fmt.Errorf("create %s: ledger id %q is not 32 lowercase hex", path, id)
	}
	db, err := openBolt(path, false, opts)
	if err != nil {
		return nil, err
	}
	now := opts.Now()
	genesis, err := MarshalCanonical(struct {
		Created  string `json:"created"`
		Format   string `json:"format"`
		LedgerID string `json:"ledger_id"`
	}{now.UTC().Format(TimeLayout), Format, id})
	if err != nil {
		db.Close()
		return nil, err
	}
	raw := encodeEntry(nil, 0, ZeroHash, now, "", TypeGenesis, genesis)
	return create(path, db, opts, id, raw, false)
}

// create writes a new ledger's buckets, meta and genesis entry raw into
// db (closed and removed on failure) and returns it open for appending;
// a mirror (CreateMirror) is marked in meta.
func create(path string, db *bolt.DB, opts Options, id string, raw []byte, mirror bool) (*Ledger, error) {
	var tree *compact.Range
	var edge0 []byte
	err := db.Update(func(tx *bolt.Tx) error {
		entries, err := tx.CreateBucket(bucketEntries)
		if err != nil {
			return err
		}
		meta, err := tx.CreateBucket(bucketMeta)
		if err != nil {
			return err
		}
		if _, err := tx.CreateBucket(bucketBlobs); err != nil {
			return err
		}
		if err := entries.Put(seqKey(0), raw); err != nil {
			return err
		}
		if err := meta.Put(metaFormat, []byte(Format)); err != nil {
			return err
		}
		if err := meta.Put(metaLedgerID, []byte(id)); err != nil {
			return err
		}
		if mirror {
			if err := meta.Put(metaMirror, []byte(MirrorMark)); err != nil {
				return err
			}
		}
		if !opts.noTree {
			if tree, edge0, err = createTree(tx, raw); err != nil {
				return err
			}
		}
		return putHead(meta, 0, Sum(raw))
	})
	if err != nil {
		db.Close()
		os.Remove(path)
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	l := &Ledger{db: db, path: path, id: id, opts: opts, mirror: mirror}
	if err := l.prepareProjections(0); err != nil {
		db.Close()
		os.Remove(path)
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	l.w = newWriter(l, 0, Sum(raw), tree, edge0)
	return l, nil
}

// Open opens an existing ledger for appending. It refuses a ledger whose
// stored head does not match its last entry (ErrInconsistent): appending
// would extend a chain that verify will report as broken.
func Open(path string, opts Options) (*Ledger, error) {
	return open(path, false, opts)
}

// OpenReadOnly opens an existing ledger for review, sharing it with other
// readers. It fails with ErrLocked while an engine holds the file. It
// accepts a ledger whose head is inconsistent or unreadable, so Verify
// can report it.
func OpenReadOnly(path string) (*Ledger, error) {
	return open(path, true, Options{})
}

func open(path string, readOnly bool, opts Options) (l *Ledger, err error) {
	opts.defaults()
	if err := checkProjections(opts.Projections); err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("open %s: %w", path, ErrNotExist)
		}
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() || fi.Size() == 0 {
		// bbolt would initialise an empty file: never write to a file
		// that is not already a ledger.
		return nil, fmt.Errorf("open %s: %w (empty or not a regular file)", path, ErrNotLedger)
	}
	if err := checkBoltPath(path); err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	// A page that is damaged in a way the meta check cannot see faults or
	// panics when bbolt reads it: an error, not a crash.
	defer catchFaults()()
	db, err := openBolt(path, readOnly, opts)
	if err != nil {
		return nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("open %s: %w: a page does not read (%v)", path, ErrUnreadable, r)
		}
		if err != nil {
			db.Close()
		}
	}()
	l = &Ledger{db: db, path: path, readOnly: readOnly, opts: opts}
	var head Head
	var last []byte
	err = db.View(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		entries := tx.Bucket(bucketEntries)
		if meta == nil || entries == nil || tx.Bucket(bucketBlobs) == nil {
			return ErrNotLedger
		}
		if f := meta.Get(metaFormat); string(f) != Format {
			return fmt.Errorf("%w %q (this opx reads %s)", ErrFormat, f, Format)
		}
		var err error
		if head, err = readHead(meta); err != nil {
			if readOnly {
				return nil // review: verify reports the damaged head
			}
			return err
		}
		l.mirror = meta.Get(metaMirror) != nil
		if readOnly {
			return nil // review: verify reports a head that does not match
		}
		if l.mirror && string(meta.Get(metaTree)) != TreeLayout {
			// A mirror was created with its tree: building one now
			// would append an entry of this machine to another's ledger.
			return fmt.Errorf("%w: a mirror without its tree", ErrTreeDamaged)
		}
		if k, v := entries.Cursor().Last(); k != nil {
			last = append([]byte(nil), v...)
			if len(k) != 8 || binary.BigEndian.Uint64(k) != head.Seq {
				return fmt.Errorf("%w (meta head_seq %d, last key %x)", ErrInconsistent, head.Seq, k)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	l.id = head.LedgerID
	if readOnly {
		return l, nil
	}
	if last == nil || Sum(last) != head.Hash {
		return nil, fmt.Errorf("open %s: %w (meta head_hash %s)", path, ErrInconsistent, head.Hash)
	}
	if err := l.prepareProjections(head.Seq); err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	tree, edge0, built, err := l.prepareTree(head.Seq)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	l.w = newWriter(l, head.Seq, head.Hash, tree, edge0)
	if built {
		if err := l.recordTreeBuilt(); err != nil {
			l.w.close()
			return nil, fmt.Errorf("open %s: record the tree built: %w", path, err)
		}
	}
	return l, nil
}

func openBolt(path string, readOnly bool, opts Options) (db *bolt.DB, err error) {
	defer func() {
		if r := recover(); r != nil {
			db, err = nil, fmt.Errorf("open %s: %w: a page does not read (%v)", path, ErrUnreadable, r)
		}
	}()
	db, err = bolt.Open(path, 0o600, &bolt.Options{
		Timeout:      opts.LockTimeout,
		ReadOnly:     readOnly,
		NoSync:       opts.NoSync,
		FreelistType: bolt.FreelistMapType,
	})
	switch {
	case err == nil:
		return db, nil
	case errors.Is(err, bolterrors.ErrTimeout):
		return nil, fmt.Errorf("open %s: %w", path, ErrLocked)
	case errors.Is(err, bolterrors.ErrInvalid), errors.Is(err, bolterrors.ErrVersionMismatch),
		errors.Is(err, bolterrors.ErrChecksum),
		strings.HasPrefix(err.Error(), "file size too small"): // untyped in bbolt: a truncated file
		return nil, fmt.Errorf("open %s: %w: %v", path, ErrNotLedger, err)
	default:
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
}

// Path returns the file path.
func (l *Ledger) Path() string { return l.path }

// ID returns the ledger_id.
func (l *Ledger) ID() string { return l.id }

// ReadOnly reports whether the ledger was opened read-only.
func (l *Ledger) ReadOnly() bool { return l.readOnly }

// Close flushes queued entries, waits for them to be durable, and closes
// the file. The returned error reports a flush that failed.
func (l *Ledger) Close() error {
	var err error
	if l.w != nil {
		err = l.w.close()
	}
	if cerr := l.db.Close(); err == nil {
		err = cerr
	}
	return err
}

// Head returns the committed head. Entries still queued by Async appends
// are not included; call Sync first to include them.
func (l *Ledger) Head() (Head, error) {
	var h Head
	err := l.view(func(tx *bolt.Tx) error {
		var err error
		h, err = readHead(tx.Bucket(bucketMeta))
		return err
	})
	return h, err
}

// Sync waits until every entry appended so far is durable.
func (l *Ledger) Sync(ctx context.Context) error {
	if l.w == nil {
		return nil
	}
	return l.w.sync(ctx)
}

// view runs fn in a read transaction, turning a bbolt panic on a corrupt
// page into an error instead of a crash.
func (l *Ledger) view(fn func(tx *bolt.Tx) error) (err error) {
	defer catchFaults()()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("read %s: %w: a page does not read (%v)", l.path, ErrUnreadable, r)
		}
	}()
	return l.db.View(fn)
}

func readHead(meta *bolt.Bucket) (Head, error) {
	var h Head
	h.LedgerID = string(meta.Get(metaLedgerID))
	seq, err := strconv.ParseUint(string(meta.Get(metaHeadSeq)), 10, 64)
	if err != nil {
		return h, fmt.Errorf("meta head_seq %q: %w", meta.Get(metaHeadSeq), ErrNotLedger)
	}
	h.Seq = seq
	if h.Hash, err = parseHashBytes(meta.Get(metaHeadHash)); err != nil {
		return h, fmt.Errorf("meta head_hash: %w: %v", ErrNotLedger, err)
	}
	return h, nil
}

func putHead(meta *bolt.Bucket, seq uint64, h Hash) error {
	if err := meta.Put(metaHeadSeq, strconv.AppendUint(nil, seq, 10)); err != nil {
		return err
	}
	return meta.Put(metaHeadHash, []byte(h.String()))
}

func seqKey(seq uint64) []byte {
	var k [8]byte
	binary.BigEndian.PutUint64(k[:], seq)
	return k[:]
}

func newLedgerID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("ledger id: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}
