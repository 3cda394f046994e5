package ledger

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/transparency-dev/merkle/compact"
	bolt "go.etcd.io/bbolt"
)

// Durability says when Append returns.
type Durability int

const (
	// Sync returns after the entries are committed and fsynced.
	Sync Durability = iota
	// Async returns once the entries are queued (their seq and hash are
	// final); they are committed by group commit within FlushInterval, or
	// at the next Sync append or Sync call, in order.
	Async
)

func (d Durability) String() string {
	if d == Async {
		return "async"
	}
	return "sync"
}

// Record is what a caller appends; the ledger adds seq, prev and ts.
type Record struct {
	Session string
	Type    string
	// Data is the payload: a json.RawMessage or []byte holding a JSON
	// object (canonicalised here), or any value encoding/json turns into
	// an object. Floats are rejected: entries hold integers only.
	Data any
	// Blobs are stored in the same transaction as the entry, so an entry
	// never becomes durable before the content it names.
	Blobs [][]byte
}

// Appended identifies a newly appended entry.
type Appended struct {
	Seq  uint64
	Hash Hash
}

// batch is one group commit: the entries and blobs it will write, and
// the channel closed once it is durable (or failed).
type batch struct {
	firstSeq uint64
	entries  [][]byte
	blobs    []preparedBlob
	hasSync  bool
	done     chan struct{}
	err      error
}

type preparedBlob struct {
	hash Hash
	zst  []byte
}

// writer serialises appends: callers encode and chain entries under mu
// (cheap: a copy and a hash), and one committer goroutine writes whole
// batches, one bbolt transaction and one fsync each. Because entries are
// chained in the order they are queued and batches are committed in the
// same order, the on-disk order equals the chain order.
type writer struct {
	l *Ledger

	mu     sync.Mutex
	seq    uint64 // last assigned
	prev   Hash   // hash of the last assigned entry
	cur    *batch // being filled; nil when empty
	flying *batch // taken by the committer, maybe not yet durable
	failed error  // sticky: set after a failed commit
	closed bool
	// durable is the seq of the last entry committed and fsynced;
	// advanced is closed (and replaced) each time it moves.
	durable  uint64
	advanced chan struct{}
	buf      []byte
	// tree is the compact range of the committed entries (nil when the
	// ledger keeps no tree); only commits change it, under cmu. hasTree
	// says, without cmu, whether there is one (it never changes).
	tree    *compact.Range
	edge0   []byte // the level-0 hashes of the tree's partial edge tile (not stored)
	hasTree bool
	// edge is a copy of the committed edge0 for readers (tileStore.tile):
	// the leaf hashes a tree read would otherwise hash again from the
	// entries (up to 255 of them per read).
	edge atomic.Pointer[edgeTile]

	// cmu is held while a batch is taken and committed, by the committer
	// goroutine or by a Sync appender that found it idle, so batches
	// commit one at a time in the order they were filled. Every write
	// transaction runs under it.
	cmu sync.Mutex

	kick chan struct{} // capacity 1: "cur has something"
	quit chan struct{}
	wg   sync.WaitGroup
}

func newWriter(l *Ledger, seq uint64, prev Hash, tree *compact.Range, edge0 []byte) *writer {
	w := &writer{l: l, seq: seq, prev: prev, tree: tree, edge0: edge0, hasTree: tree != nil, durable: seq, advanced: make(chan struct{}),
		kick: make(chan struct{}, 1), quit: make(chan struct{})}
	w.publishEdge()
	w.wg.Add(1)
	go w.loop()
	return w
}

// Append adds records as consecutive entries and returns their seqs and
// hashes. With Sync it returns after they are durable; with Async after
// they are queued. A record that cannot become an entry fails the whole
// call before anything is queued (ErrInvalidRecord). A failed commit
// breaks the ledger for good (ErrBroken); reopen it to see what is on
// disk. If ctx ends while a Sync append waits, the entries stay queued
// and the error says the wait, not the append, was abandoned.
func (l *Ledger) Append(ctx context.Context, d Durability, recs ...Record) ([]Appended, error) {
	if l.readOnly {
		return nil, ErrReadOnly
	}
	datas := make([][]byte, len(recs))
	var blobs []preparedBlob
	for i, r := range recs {
		if r.Type == "" {
			return nil, fmt.Errorf("%w: record %d has no type", ErrInvalidRecord, i)
		}
		data, err := canonicalData(r.Data)
		if err != nil {
			return nil, fmt.Errorf("%w: record %d (%s): %v", ErrInvalidRecord, i, r.Type, err)
		}
		if n := maxEntrySize(r, data); n > MaxLineSize {
			return nil, fmt.Errorf("%w: record %d (%s): an entry of up to %d bytes is over the maximum entry size (%d bytes), which no export reader accepts",
				ErrInvalidRecord, i, r.Type, n, MaxLineSize)
		}
		datas[i] = data
		for _, b := range r.Blobs {
			blobs = append(blobs, prepareBlob(b))
		}
	}
	return l.w.append(ctx, d, recs, datas, blobs)
}

// maxEntrySize bounds the size of the entry r would become: its data,
// its session and type escaped at worst (\u00XX per byte), and the fixed
// members (prev, seq, ts and the keys). Append refuses a record whose
// entry could exceed MaxLineSize: the store never holds an entry that its
// own export could not carry.
func maxEntrySize(r Record, data []byte) int {
	return len(data) + 6*(len(r.Session)+len(r.Type)) + 256
}

// canonicalData turns a record's Data into canonical JSON object bytes.
func canonicalData(v any) ([]byte, error) {
	var out []byte
	var err error
	switch d := v.(type) {
	case nil:
		return []byte("{}"), nil
	case json.RawMessage:
		out, err = Canonicalize(d)
	case []byte:
		out, err = Canonicalize(d)
	default:
		out, err = MarshalCanonical(v)
	}
	if err != nil {
		return nil, err
	}
	if len(out) == 0 || out[0] != '{' {
		return nil, fmt.Errorf("data is not a JSON object")
	}
	return out, nil
}

func (w *writer) append(ctx context.Context, d Durability, recs []Record, datas [][]byte, blobs []preparedBlob) ([]Appended, error) {
	if w.l.mirror {
		return nil, ErrMirror
	}
	w.mu.Lock()
	b, out, err := w.enqueueLocked(d, recs, datas, blobs)
	if err != nil {
		w.mu.Unlock()
		return nil, err
	}
	w.mu.Unlock()
	if d == Async {
		w.signal()
		return out, nil
	}
	// With no commit under way, commit here rather than wake the
	// committer and wait for it: a lone Sync writer then pays for its
	// fsync and nothing else. Otherwise the committer takes the batch
	// when the running commit ends, with whatever joined it meanwhile.
	if w.cmu.TryLock() {
		w.flushLocked()
		w.cmu.Unlock()
	} else {
		w.signal()
	}
	select {
	case <-b.done:
	case <-ctx.Done():
		// The entries stay queued and will be committed; the caller only
		// stops waiting for it.
		return out, fmt.Errorf("waiting for commit: %w", ctx.Err())
	}
	if b.err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBroken, b.err)
	}
	return out, nil
}

// enqueueLocked chains records onto the queued batch; w.mu is held.
func (w *writer) enqueueLocked(d Durability, recs []Record, datas [][]byte, blobs []preparedBlob) (*batch, []Appended, error) {
	if w.closed {
		return nil, nil, ErrClosed
	}
	if w.failed != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrBroken, w.failed)
	}
	if w.cur == nil {
		w.cur = &batch{firstSeq: w.seq + 1, done: make(chan struct{})}
	}
	b := w.cur
	now := w.l.opts.Now()
	out := make([]Appended, len(recs))
	for i, r := range recs {
		w.seq++
		w.buf = encodeEntry(w.buf[:0], w.seq, w.prev, now, r.Session, r.Type, datas[i])
		raw := append([]byte(nil), w.buf...)
		w.prev = Sum(raw)
		b.entries = append(b.entries, raw)
		out[i] = Appended{Seq: w.seq, Hash: w.prev}
	}
	b.blobs = append(b.blobs, blobs...)
	if d == Sync {
		b.hasSync = true
	}
	return b, out, nil
}

// atHead is the ledger as of the entry before the one appendAtHead adds:
// the projections' states and the tree (nil when it keeps none).
type atHead struct {
	states []ProjectionState
	tree   *TreeHead
}

// appendAtHead appends the record build makes from the ledger as of the
// entry before it: the projections' states and the tree. No commit runs
// meanwhile (cmu), and appends wait (w.mu) only while those are read, with
// the entries queued since the last commit folded in memory, in a read
// transaction: no commit and no wait for one happens under w.mu, and no
// write transaction can be under way (every write runs under cmu), so the
// read transaction cannot wait for a remap.
func (w *writer) appendAtHead(d Durability, build func(at atHead) (Record, error)) (Appended, error) {
	if w.l.mirror {
		return Appended{}, ErrMirror
	}
	w.cmu.Lock()
	defer w.cmu.Unlock()
	w.mu.Lock()
	if w.failed != nil {
		w.mu.Unlock()
		return Appended{}, fmt.Errorf("%w: %v", ErrBroken, w.failed)
	}
	var at atHead
	var entries []Entry
	var err error
	if b := w.cur; b != nil && len(w.l.opts.Projections) > 0 {
		entries, err = parseEntries(b.firstSeq, b.entries) // none when it holds only blobs
	}
	if w.tree != nil {
		var queued [][32]byte
		if w.cur != nil {
			queued = leafHashes(w.cur.entries)
		}
		th := treeAfter(w.tree, queued)
		at.tree = &th
	}
	if err == nil {
		err = w.l.view(func(tx *bolt.Tx) error {
			if len(entries) > 0 {
				at.states = foldedStates(tx, w.l.opts.Projections, entries)
			} else {
				at.states = projectionStates(tx)
			}
			return nil
		})
	}
	var r Record
	if err == nil {
		r, err = build(at)
	}
	var data []byte
	if err == nil {
		if data, err = canonicalData(r.Data); err != nil {
			err = fmt.Errorf("%w: %s: %v", ErrInvalidRecord, r.Type, err)
		}
	}
	if err != nil {
		w.mu.Unlock()
		return Appended{}, err
	}
	b, out, err := w.enqueueLocked(d, []Record{r}, [][]byte{data}, nil)
	w.mu.Unlock()
	if err != nil {
		return Appended{}, err
	}
	if d == Async {
		w.signal()
		return out[0], nil
	}
	w.flushLocked()
	<-b.done
	if b.err != nil {
		return Appended{}, fmt.Errorf("%w: %v", ErrBroken, b.err)
	}
	return out[0], nil
}

// PutBlob stores content durably and returns its hash. Prefer Record.Blobs,
// which stores the blob in the same transaction as the entry naming it.
func (l *Ledger) PutBlob(ctx context.Context, content []byte) (Hash, error) {
	if l.readOnly {
		return Hash{}, ErrReadOnly
	}
	pb := prepareBlob(content)
	_, err := l.w.append(ctx, Sync, nil, nil, []preparedBlob{pb})
	return pb.hash, err
}

func (w *writer) signal() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// sync waits until everything queued before the call is durable.
func (w *writer) sync(ctx context.Context) error {
	w.mu.Lock()
	if w.failed != nil {
		w.mu.Unlock()
		return fmt.Errorf("%w: %v", ErrBroken, w.failed)
	}
	b := w.cur
	if b != nil {
		b.hasSync = true
	} else {
		// Nothing queued; wait for the batch being committed, if any.
		// Batches commit in order, so the newest one covers the rest.
		b = w.flying
	}
	w.mu.Unlock()
	if b == nil {
		return nil
	}
	w.signal()
	select {
	case <-b.done:
		if b.err != nil {
			return fmt.Errorf("%w: %v", ErrBroken, b.err)
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (w *writer) loop() {
	defer w.wg.Done()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		select {
		case <-w.kick:
		case <-w.quit:
			w.flush()
			return
		}
		// Async-only batches wait up to FlushInterval to grow; a Sync
		// append, a full batch or the deadline ends the wait.
		timer.Reset(w.l.opts.FlushInterval)
	wait:
		for {
			w.mu.Lock()
			b := w.cur
			ready := b == nil || b.hasSync || len(b.entries) >= w.l.opts.MaxBatch
			w.mu.Unlock()
			if ready {
				break
			}
			select {
			case <-w.kick:
			case <-timer.C:
				break wait
			case <-w.quit:
				break wait
			}
		}
		timer.Stop()
		w.flush()
	}
}

// flush takes the queued batch, if any, and commits it.
func (w *writer) flush() {
	w.cmu.Lock()
	defer w.cmu.Unlock()
	w.flushLocked()
}

func (w *writer) flushLocked() {
	w.mu.Lock()
	b := w.cur
	w.cur = nil
	if b != nil {
		w.flying = b
	}
	w.mu.Unlock()
	if b != nil {
		w.commit(b)
	}
}

// edgeTile is the level-0 edge tile of a committed tree: tile idx's
// leaf hashes, as many as the tree had entries in it.
type edgeTile struct {
	idx    uint64
	hashes []byte
}

// publishEdge copies the committed edge for readers; under cmu (or
// before the writer runs).
func (w *writer) publishEdge() {
	if w.tree == nil {
		return
	}
	w.edge.Store(&edgeTile{idx: w.tree.End() / tileWidth, hashes: bytes.Clone(w.edge0)})
}

// edgeTile is the writer's committed level-0 edge (nil: none known).
func (l *Ledger) edgeTile() *edgeTile {
	if l.w == nil {
		return nil
	}
	return l.w.edge.Load()
}

func (w *writer) commit(b *batch) {
	tree, edge0, err := w.commitTx(b)
	if err == nil && tree != nil {
		w.tree, w.edge0 = tree, edge0 // under cmu, as every commit
		w.publishEdge()
	}
	w.mu.Lock()
	w.finishLocked(b, err)
	w.mu.Unlock()
}

// commitTx writes a batch in one transaction: its entries, the tree grown
// by them (returned, to replace w.tree and w.edge0 once durable), the
// projections, the blobs and the head.
func (w *writer) commitTx(b *batch) (tree *compact.Range, edge0 []byte, err error) {
	var entries []Entry
	if len(w.l.opts.Projections) > 0 {
		if entries, err = parseEntries(b.firstSeq, b.entries); err != nil {
			return nil, nil, err
		}
	}
	// The leaves are hashed by the committer, before its transaction:
	// off the appenders' path, and off the write lock.
	var leaves [][32]byte
	if w.tree != nil {
		leaves = leafHashes(b.entries)
	}
	err = w.l.db.Update(func(tx *bolt.Tx) error {
		bucket := tx.Bucket(bucketEntries)
		bucket.FillPercent = 1.0 // keys only ever grow: pack pages full
		for i, raw := range b.entries {
			if err := bucket.Put(seqKey(b.firstSeq+uint64(i)), raw); err != nil {
				return err
			}
		}
		if w.tree != nil && len(b.entries) > 0 {
			if tree, edge0, err = appendTree(tx, w.tree, w.edge0, leaves); err != nil {
				return err
			}
		}
		// The projections see the entries in the same transaction.
		if err := applyProjections(tx, w.l.opts.Projections, entries); err != nil {
			return err
		}
		if len(b.blobs) > 0 {
			blobs := tx.Bucket(bucketBlobs)
			for _, pb := range b.blobs {
				if blobs.Get(pb.hash[:]) != nil {
					continue // content-addressed: already stored
				}
				if err := blobs.Put(pb.hash[:], pb.zst); err != nil {
					return err
				}
			}
		}
		if n := len(b.entries); n > 0 {
			return putHead(tx.Bucket(bucketMeta), b.firstSeq+uint64(n-1), Sum(b.entries[n-1]))
		}
		return nil
	})
	return tree, edge0, err
}

// finishLocked ends a batch's commit; w.mu is held. A failed commit
// breaks the writer: entries queued after the batch chain onto entries
// that are not on disk, so they fail too.
func (w *writer) finishLocked(b *batch, err error) {
	if err != nil {
		if w.failed == nil {
			w.failed = err
			// Durable will never move again: wake every waiter, so that
			// it sees the failure (Watermark) instead of waiting for ever.
			close(w.advanced)
		}
		if w.cur != nil {
			w.cur.err = err
			close(w.cur.done)
			w.cur = nil
		}
	} else if n := len(b.entries); n > 0 && w.failed == nil {
		w.durable = b.firstSeq + uint64(n-1)
		close(w.advanced)
		w.advanced = make(chan struct{})
	}
	b.err = err
	close(b.done)
}

// Watermark is where the writer stands: Queued is the seq of the last
// entry appended (its seq and hash are final, but it may not be on disk
// yet), Durable the seq of the last entry committed and fsynced. Advanced
// is closed when Durable next moves, or when a commit fails (Durable then
// never moves again, and Watermark returns ErrBroken).
type Watermark struct {
	Queued, Durable uint64
	Advanced        <-chan struct{}
}

// Watermark returns the writer's watermark: what a caller may announce
// about the ledger is what is at or below Durable. A ledger opened
// read-only has no writer: both marks are its head, and Advanced is nil.
func (l *Ledger) Watermark() (Watermark, error) {
	if l.w == nil {
		h, err := l.Head()
		return Watermark{Queued: h.Seq, Durable: h.Seq}, err
	}
	w := l.w
	w.mu.Lock()
	defer w.mu.Unlock()
	wm := Watermark{Queued: w.seq, Durable: w.durable, Advanced: w.advanced}
	if w.failed != nil {
		return wm, fmt.Errorf("%w: %v", ErrBroken, w.failed)
	}
	return wm, nil
}

func (w *writer) close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	w.mu.Unlock()
	close(w.quit)
	w.wg.Wait()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.failed != nil {
		return fmt.Errorf("%w: %v", ErrBroken, w.failed)
	}
	return nil
}
