package ledger

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/klauspost/compress/zstd"
	bolt "go.etcd.io/bbolt"
)

// # Mirrors
//
// A mirror is a ledger that holds another ledger's entries verbatim: the
// fleet collector keeps one per source it receives. It is an ordinary
// opx-ledger/1 file (the source's ledger_id in meta, the same entries
// under the same keys, its own tree tiles and projections written in the
// transaction of each commit), so every reader of ledgers reads it, plus
// meta "mirror" = MirrorMark. Its entries come only from AppendVerbatim,
// which takes the next entry of the source as it is and checks that it
// is one: it parses, its seq is the next one and its prev is the hash of
// the entry before. Nothing of this machine is ever appended to it:
// Append, PutBlob(s), Checkpoint and PruneBlobs refuse a mirror
// (ErrMirror), and a mirror is never given a tree on open (it is created
// with one). Blobs come from PutBlobFrame, the source's stored zstd frame,
// stored once it decompresses (within MaxStreamWindow) to content of its
// hash. A commit is one bbolt transaction as for Append: all or nothing.

// MirrorMark is the value of meta "mirror" in a mirror ledger.
const MirrorMark = "opx-mirror/1"

var metaMirror = []byte("mirror")

// ErrMirror is returned when something would append an entry of this
// machine to a mirror, or AppendVerbatim is called on a ledger that is
// not one.
var ErrMirror = errors.New("a mirror ledger holds another ledger's entries only")

// CreateMirror makes a new mirror ledger at path from the source's
// genesis entry (its stored bytes): seq 0, prev zero, type
// ledger.genesis, whose ledger_id becomes the mirror's. Refusals of the
// entry are *IntegrityError.
func CreateMirror(path string, genesis []byte, opts Options) (*Ledger, error) {
	opts.defaults()
	if err := checkProjections(opts.Projections); err != nil {
		return nil, fmt.Errorf("create mirror %s: %w", path, err)
	}
	id, err := CheckMirrorGenesis(genesis)
	if err != nil {
		return nil, fmt.Errorf("create mirror %s: %w", path, err)
	}
	if _, err := os.Lstat(path); err == nil {
		return nil, fmt.Errorf("create mirror %s: %w", path, ErrExists)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create mirror %s: %w", path, err)
	}
	// The mirror is made whole in a temporary file beside path and
	// renamed into place: a crash part way leaves no file at path that
	// is not a mirror (only a temporary one, which nothing opens).
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".creating")
	os.Remove(tmp) // left by an earlier crash
	db, err := openBolt(tmp, false, opts)
	if err != nil {
		return nil, err
	}
	l, err := create(tmp, db, opts, id, bytes.Clone(genesis), true)
	if err != nil {
		os.Remove(tmp)
		return nil, err
	}
	if err := l.Close(); err != nil {
		os.Remove(tmp)
		return nil, fmt.Errorf("create mirror %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return nil, fmt.Errorf("create mirror %s: %w", path, err)
	}
	if !opts.NoSync {
		if err := syncDir(filepath.Dir(path)); err != nil {
			return nil, fmt.Errorf("create mirror %s: %w", path, err)
		}
	}
	return OpenMirror(path, opts)
}

// CheckMirrorGenesis checks, as CreateMirror does, that genesis is a
// source's genesis entry a mirror can be made of, and returns its ledger
// id. Refusals are *IntegrityError.
func CheckMirrorGenesis(genesis []byte) (string, error) {
	e, err := checkVerbatim(0, ZeroHash, genesis)
	if err != nil {
		return "", err
	}
	id, err := parseGenesisID(e.Data)
	if err == nil && (e.Type != TypeGenesis || !isLedgerID(id)) {
		err = errors.New("not a ledger.genesis entry with a ledger id of 32 lowercase hex")
	}
	if err != nil {
		return "", &IntegrityError{Seq: 0, Kind: KindUnreadable, Detail: "genesis: " + err.Error()}
	}
	return id, nil
}

// CheckVerbatim checks, as AppendVerbatim does, that raw is an entry a
// mirror takes at seq after an entry hashing to prev: it parses, carries
// seq and chains by prev. Refusals are *IntegrityError (kinds
// unreadable, gap, seq-mismatch, hash-mismatch). It lets a caller verify
// entries before it holds the mirror (the fleet collector's journal).
func CheckVerbatim(seq uint64, prev Hash, raw []byte) error {
	_, err := checkVerbatim(seq, prev, raw)
	if err != nil {
		return err
	}
	return nil
}

// CheckBlobFrame checks, as PutBlobFrame does, that frame is a zstd
// frame a mirror stores as blob h. A refusal is an *IntegrityError of
// kind blob-corrupt.
func CheckBlobFrame(h Hash, frame []byte) error {
	if len(frame) > maxBlobFrame {
		return &IntegrityError{Kind: KindBlobCorrupt, Detail: fmt.Sprintf("blob %s: a frame of %d bytes (at most %d)", h, len(frame), int64(maxBlobFrame)), Expected: h.String()}
	}
	dec := blobDecoders.Get().(*blobDecoder)
	f := checkBlobFrame(dec.d, h, bytes.NewReader(frame))
	blobDecoders.Put(dec)
	if f != nil {
		return f
	}
	return nil
}

// OpenMirror opens an existing mirror ledger for appending; a ledger that
// is not a mirror is refused (ErrMirror).
func OpenMirror(path string, opts Options) (*Ledger, error) {
	l, err := Open(path, opts)
	if err != nil {
		return nil, err
	}
	if !l.mirror {
		l.Close()
		return nil, fmt.Errorf("open mirror %s: %w: meta has no mirror mark", path, ErrMirror)
	}
	return l, nil
}

// IsMirror reports whether l is a mirror ledger.
func (l *Ledger) IsMirror() bool { return l.mirror }

// MirrorNext returns the seq AppendVerbatim takes next and the hash its
// prev must be: the entry after the last one queued.
func (l *Ledger) MirrorNext() (seq uint64, prev Hash) {
	if l.w == nil {
		return 0, ZeroHash
	}
	l.w.mu.Lock()
	defer l.w.mu.Unlock()
	return l.w.seq + 1, l.w.prev
}

// AppendVerbatim appends the source's entries raws, in order, as they
// are. Each must parse as an entry, carry the next seq and, as prev, the
// hash of the entry before it; the first that does not fails the whole
// call with an *IntegrityError (kinds unreadable, gap, seq-mismatch,
// hash-mismatch) and nothing is queued. With Sync it returns once they
// are durable, as Append.
func (l *Ledger) AppendVerbatim(ctx context.Context, d Durability, raws ...[]byte) ([]Appended, error) {
	if l.readOnly {
		return nil, ErrReadOnly
	}
	if !l.mirror {
		return nil, ErrMirror
	}
	w := l.w
	w.mu.Lock()
	if err := w.refusal(); err != nil {
		w.mu.Unlock()
		return nil, err
	}
	seq, prev := w.seq, w.prev
	out := make([]Appended, len(raws))
	own := make([][]byte, len(raws))
	for i, raw := range raws {
		seq++
		if _, err := checkVerbatim(seq, prev, raw); err != nil {
			w.mu.Unlock()
			return nil, err
		}
		own[i] = bytes.Clone(raw)
		prev = Sum(raw)
		out[i] = Appended{Seq: seq, Hash: prev}
	}
	if w.cur == nil {
		w.cur = &batch{firstSeq: w.seq + 1, done: make(chan struct{})}
	}
	b := w.cur
	b.entries = append(b.entries, own...)
	w.seq, w.prev = seq, prev
	if d == Sync {
		b.hasSync = true
	}
	w.mu.Unlock()
	return out, w.wait(ctx, d, b)
}

// PutBlobFrame stores a blob's zstd frame as the source stored it, once
// it decompresses to content that hashes to h (a refusal is an
// *IntegrityError of kind blob-corrupt). A frame already stored is left
// as it is.
func (l *Ledger) PutBlobFrame(ctx context.Context, d Durability, h Hash, frame []byte) error {
	if l.readOnly {
		return ErrReadOnly
	}
	if !l.mirror {
		return ErrMirror
	}
	if len(frame) > maxBlobFrame {
		return &IntegrityError{Kind: KindBlobCorrupt, Detail: fmt.Sprintf("blob %s: a frame of %d bytes (at most %d)", h, len(frame), int64(maxBlobFrame)), Expected: h.String()}
	}
	dec := blobDecoders.Get().(*blobDecoder)
	f := checkBlobFrame(dec.d, h, bytes.NewReader(frame))
	blobDecoders.Put(dec)
	if f != nil {
		return f
	}
	w := l.w
	w.mu.Lock()
	if err := w.refusal(); err != nil {
		w.mu.Unlock()
		return err
	}
	if w.cur == nil {
		w.cur = &batch{firstSeq: w.seq + 1, done: make(chan struct{})}
	}
	b := w.cur
	b.blobs = append(b.blobs, preparedBlob{hash: h, zst: bytes.Clone(frame)})
	if d == Sync {
		b.hasSync = true
	}
	w.mu.Unlock()
	return w.wait(ctx, d, b)
}

// HasBlob reports whether the blob h is stored (committed).
func (l *Ledger) HasBlob(h Hash) (bool, error) {
	var ok bool
	err := l.view(func(tx *bolt.Tx) error {
		ok = tx.Bucket(bucketBlobs).Get(h[:]) != nil
		return nil
	})
	return ok, err
}

type blobDecoder struct{ d *zstd.Decoder }

var blobDecoders = sync.Pool{New: func() any { return &blobDecoder{newBlobDecoder()} }}

// refusal is why the writer takes nothing more (closed, or broken by a
// failed commit), as Append says it; w.mu is held.
func (w *writer) refusal() error {
	if w.closed {
		return ErrClosed
	}
	if w.failed != nil {
		return fmt.Errorf("%w: %v", ErrBroken, w.failed)
	}
	return nil
}

// wait commits (or has the committer commit) the batch b just filled, as
// append does, and for Sync waits until it is durable.
func (w *writer) wait(ctx context.Context, d Durability, b *batch) error {
	if d == Async {
		w.signal()
		return nil
	}
	if w.cmu.TryLock() {
		w.flushLocked()
		w.cmu.Unlock()
	} else {
		w.signal()
	}
	select {
	case <-b.done:
	case <-ctx.Done():
		return fmt.Errorf("waiting for commit: %w", ctx.Err())
	}
	if b.err != nil {
		return fmt.Errorf("%w: %v", ErrBroken, b.err)
	}
	return nil
}

// checkVerbatim checks that raw is an entry the commit can fold (it
// parses as the folds parse it) with seq and prev.
func checkVerbatim(seq uint64, prev Hash, raw []byte) (Entry, error) {
	if len(raw) > MaxLineSize {
		return Entry{}, &IntegrityError{Seq: seq, Kind: KindUnreadable, Detail: fmt.Sprintf("an entry of %d bytes (at most %d)", len(raw), MaxLineSize)}
	}
	var e Entry
	err := faultless(func() error {
		var err error
		e, err = parseForFold(raw, newInterner())
		if err == nil {
			_, err = ParseEntry(raw) // the strict parse as well: readers use it
		}
		return err
	})
	if err != nil {
		return e, &IntegrityError{Seq: seq, Kind: KindUnreadable, Detail: "entry does not parse: " + err.Error()}
	}
	if e.Seq != seq {
		kind := KindSeqMismatch
		if e.Seq > seq {
			kind = KindGap
		}
		return e, &IntegrityError{Seq: seq, Kind: kind, Detail: fmt.Sprintf("entry %d where %d comes next", e.Seq, seq),
			Expected: fmt.Sprint(seq), Found: fmt.Sprint(e.Seq)}
	}
	if e.Prev != prev {
		return e, &IntegrityError{Seq: seq, Kind: KindHashMismatch, Detail: "prev is not the hash of the entry before",
			Expected: prev.String(), Found: e.Prev.String()}
	}
	return e, nil
}

func isLedgerID(id string) bool {
	if len(id) != 32 {
		return false
	}
	for _, c := range []byte(id) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
