package ledger

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/zeebo/blake3"
	bolt "go.etcd.io/bbolt"
)

// Projection is a pure fold of entries into state of its own: the bucket
// p.<Name>. A ledger opened with projections applies every entry to each
// of them in the transaction that appends it, so entries and projections
// never disagree, and rebuilds them from the entries alone when they are
// missing, behind, or of another Version.
//
// Apply must depend only on the bucket's contents and the entry (no clock,
// no randomness, no map iteration order), so that dropping every p.*
// bucket and folding again gives byte-identical buckets.
type Projection interface {
	// Name names the bucket: lowercase letters, digits, '-' and '_'.
	Name() string
	// Version changes whenever Apply changes what it writes: a stored
	// projection of another version is rebuilt on open.
	Version() string
	// Apply folds one entry, reading and writing by key (folds run
	// concurrently and ahead of commits: asking for a cursor fails the
	// fold; only readers use cursors). An error marks the projection broken
	// (its bucket is emptied and reads fail with ErrProjectionBroken
	// until a rebuild); it never fails the append.
	Apply(b Bucket, e *Entry) error
}

// Bucket is a projection's sorted key-value state inside one transaction.
// Values returned by Get and by cursors are valid only during the call
// that receives the bucket.
type Bucket interface {
	Get(key []byte) []byte
	Put(key, value []byte) error
	Delete(key []byte) error
	Cursor() Cursor
}

// Cursor walks a bucket in key order. Each method returns a nil key when
// there is nothing more.
type Cursor interface {
	First() (key, value []byte)
	Last() (key, value []byte)
	Next() (key, value []byte)
	Prev() (key, value []byte)
	Seek(seek []byte) (key, value []byte)
}

// Errors of projections.
var (
	// ErrNoProjection is returned when a ledger holds no projection of
	// that name (it was not opened with it, or it was never built).
	ErrNoProjection = errors.New("no such projection")
	// ErrProjectionStale is returned by reads of a projection that is
	// behind the ledger's head or of another version, on a ledger opened
	// read-only (which cannot rebuild it): fold it in memory instead.
	ErrProjectionStale = errors.New("projection is not up to date")
	// ErrProjectionBroken is returned by reads of a projection whose
	// Apply failed; a rebuild clears it.
	ErrProjectionBroken = errors.New("projection broken")
)

// TypeCheckpoint is the entry type that records projections' state roots
// (see Checkpoint), so a rebuild can prove it reproduces what the engine
// had.
const TypeCheckpoint = "ledger.checkpoint"

var (
	bucketProjState = []byte("p._state") // name -> seq(8) | root(32) | broken(1) | version
	projName        = regexp.MustCompile(`^[a-z0-9_-]{1,64}$`)
)

// projBucketName is a projection's bucket.
func projBucketName(name string) []byte { return []byte("p." + name) }

// projState is what p._state records of one projection.
type projState struct {
	through uint64 // the last entry applied
	root    Root
	broken  bool
	version string
}

func (s projState) encode() []byte {
	b := make([]byte, 0, 41+len(s.version))
	b = binary.BigEndian.AppendUint64(b, s.through)
	b = append(b, s.root[:]...)
	if s.broken {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	return append(b, s.version...)
}

func decodeProjState(v []byte) (projState, bool) {
	if len(v) < 41 {
		return projState{}, false
	}
	var s projState
	s.through = binary.BigEndian.Uint64(v)
	copy(s.root[:], v[8:40])
	s.broken = v[40] == 1
	s.version = string(v[41:])
	return s, true
}

// Root is a projection's state root: a digest of its whole bucket, the sum
// (mod 2^256, in four 64-bit lanes) of BLAKE3(len(key) | key | value) over
// every pair. It is kept up to date with each Put and Delete at no extra
// reads, and equal for equal contents however they were reached. It
// guards against bugs (a fold that skipped an entry), not against an
// adversary: the hash chain does that.
type Root [32]byte

func (r Root) String() string { return Hash(r).String() }

// pairDigest is BLAKE3(len(key) | key | value) as four lanes. buf is
// scratch space, kept by the caller across calls: one pair is hashed in
// one call, without a streaming hasher's 8 KiB state.
func pairDigest(buf *[]byte, key, value []byte) [4]uint64 {
	b := binary.BigEndian.AppendUint64((*buf)[:0], uint64(len(key)))
	b = append(append(b, key...), value...)
	*buf = b
	sum := blake3.Sum256(b)
	var out [4]uint64
	for i := range out {
		out[i] = binary.LittleEndian.Uint64(sum[i*8:])
	}
	return out
}

func (r *Root) add(d [4]uint64, sign int) {
	var lanes [4]uint64
	for i := range lanes {
		lanes[i] = binary.LittleEndian.Uint64(r[i*8:])
	}
	var carry uint64
	for i := range lanes {
		x := d[i]
		if sign < 0 {
			x = ^x // two's complement: subtract by adding ~d + 1
		}
		s := lanes[i] + x
		c1 := uint64(0)
		if s < lanes[i] {
			c1 = 1
		}
		s2 := s + carry
		if s2 < s {
			c1++
		}
		if sign < 0 && i == 0 {
			s3 := s2 + 1
			if s3 < s2 {
				c1++
			}
			s2 = s3
		}
		lanes[i], carry = s2, c1
	}
	for i := range lanes {
		binary.LittleEndian.PutUint64(r[i*8:], lanes[i])
	}
}

// trackedBucket is a bolt bucket that keeps its root as it changes. It
// holds changes in memory until the batch ends (prepare, write): a
// projection that updates the same counters for every entry then writes
// each once per batch, and its root is updated once per key. It has no
// cursor: folds run concurrently, and in memory ahead of a commit
// (foldedStates), where a cursor would need the pending writes made.
// Asking for one marks the bucket misused (the fold fails, so the
// projection is broken however it is folded) and returns an empty cursor.
type trackedBucket struct {
	b       *bolt.Bucket
	root    *Root
	dirty   map[string][]byte // pending value, or nil for a delete
	misused bool
}

func newTracked(b *bolt.Bucket, root *Root) *trackedBucket {
	return &trackedBucket{b: b, root: root, dirty: map[string][]byte{}}
}

func (t *trackedBucket) Get(key []byte) []byte {
	if v, ok := t.dirty[string(key)]; ok {
		return v
	}
	return t.b.Get(key)
}

func (t *trackedBucket) Put(key, value []byte) error {
	t.dirty[string(key)] = append(make([]byte, 0, len(value)), value...)
	return nil
}

func (t *trackedBucket) Delete(key []byte) error {
	t.dirty[string(key)] = nil
	return nil
}

func (t *trackedBucket) Cursor() Cursor {
	t.misused = true
	return errCursor{}
}

// pairOp is one pending change, ready to write.
type pairOp struct {
	key, value []byte // value nil: delete
}

// prepare turns the pending changes into writes, in key order, and
// updates the root. It only reads the transaction, so projections
// prepare concurrently; write then applies the result.
func (t *trackedBucket) prepare() []pairOp {
	if len(t.dirty) == 0 {
		return nil
	}
	keys := make([]string, 0, len(t.dirty))
	for k := range t.dirty {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	ops := make([]pairOp, 0, len(keys))
	var buf []byte
	for _, k := range keys {
		key, v := []byte(k), t.dirty[k]
		old := t.b.Get(key)
		switch {
		case v == nil && old == nil, v != nil && old != nil && bytes.Equal(old, v):
			continue // nothing to delete, or the same value
		case v == nil:
			t.root.add(pairDigest(&buf, key, old), -1)
		default:
			if old != nil {
				t.root.add(pairDigest(&buf, key, old), -1)
			}
			t.root.add(pairDigest(&buf, key, v), +1)
		}
		ops = append(ops, pairOp{key, v})
	}
	clear(t.dirty)
	return ops
}

// write applies prepared changes.
func (t *trackedBucket) write(ops []pairOp) error {
	for _, op := range ops {
		var err error
		if op.value == nil {
			err = t.b.Delete(op.key)
		} else {
			err = t.b.Put(op.key, op.value)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// errCursor is the empty cursor of a misused trackedBucket.
type errCursor struct{}

func (errCursor) First() ([]byte, []byte)      { return nil, nil }
func (errCursor) Last() ([]byte, []byte)       { return nil, nil }
func (errCursor) Next() ([]byte, []byte)       { return nil, nil }
func (errCursor) Prev() ([]byte, []byte)       { return nil, nil }
func (errCursor) Seek([]byte) ([]byte, []byte) { return nil, nil }

// readBucket is a bolt bucket in a read-only transaction.
type readBucket struct{ b *bolt.Bucket }

func (r readBucket) Get(key []byte) []byte  { return r.b.Get(key) }
func (readBucket) Put([]byte, []byte) error { return ErrReadOnly }
func (readBucket) Delete([]byte) error      { return ErrReadOnly }
func (r readBucket) Cursor() Cursor         { return r.b.Cursor() }

// checkProjections refuses projections with bad or duplicate names.
func checkProjections(ps []Projection) error {
	seen := map[string]bool{}
	for _, p := range ps {
		n := p.Name()
		if !projName.MatchString(n) || n[0] == '_' {
			return fmt.Errorf("projection name %q: want 1-64 of [a-z0-9_-], not starting with _", n)
		}
		if seen[n] {
			return fmt.Errorf("projection %q given twice", n)
		}
		seen[n] = true
	}
	return nil
}

// parallelFold is the batch size from which projections fold on all
// cores, one goroutine per projection (catch-up and rebuild batches; a
// commit's few entries fold in line).
const parallelFold = 256

// applyProjections folds parsed entries (consecutive) into the
// projections ps, inside tx. A projection whose Apply fails is emptied and
// marked broken; the append goes on.
//
// Apply reads and writes through a trackedBucket that holds writes in
// memory, so for a large batch the projections fold concurrently
// (runFolds): they only read the transaction (each its own bucket) until
// every fold is done, each preparing its writes (and root) as its fold
// ends, and the writes are made one projection after another.
func applyProjections(tx *bolt.Tx, ps []Projection, entries []Entry) error {
	if len(ps) == 0 || len(entries) == 0 {
		return nil
	}
	folds, behind := runFolds(tx, ps, entries)
	for _, f := range behind {
		// Cannot happen once opened: never fold with a gap.
		if err := markBroken(tx, f.p.Name(), entries[0].Seq, f.p.Version(), fmt.Errorf("behind: next entry %d", f.next)); err != nil {
			return err
		}
	}
	st := tx.Bucket(bucketProjState)
	for _, f := range folds {
		if f.failed != nil {
			if err := markBroken(tx, f.p.Name(), f.at, f.p.Version(), f.failed); err != nil {
				return err
			}
			continue
		}
		if err := f.tb.write(f.ops); err != nil {
			return err
		}
		f.s.version = f.p.Version()
		if err := st.Put([]byte(f.p.Name()), f.s.encode()); err != nil {
			return err
		}
	}
	return nil
}

// fold is one projection's fold of a batch.
type fold struct {
	p      Projection
	s      projState
	next   uint64 // the first entry it has not seen
	tb     *trackedBucket
	failed error
	at     uint64
	ops    []pairOp // its writes, prepared (and its root updated)
}

// runFolds folds entries into each projection of ps that is not broken,
// reading tx but not writing it: each fold's writes are prepared (ops)
// and its state (through, root) updated in memory. Projections whose
// state is behind the first entry are returned apart, unfolded. The
// projections fold concurrently for a large batch.
func runFolds(tx *bolt.Tx, ps []Projection, entries []Entry) (folds, behind []*fold) {
	if len(entries) == 0 {
		return nil, nil
	}
	st := tx.Bucket(bucketProjState)
	for _, p := range ps {
		s, ok := decodeProjState(st.Get([]byte(p.Name())))
		if s.broken {
			continue
		}
		f := &fold{p: p, s: s}
		if ok {
			f.next = s.through + 1
		}
		if entries[0].Seq > f.next {
			behind = append(behind, f)
			continue
		}
		f.tb = newTracked(tx.Bucket(projBucketName(p.Name())), &f.s.root)
		folds = append(folds, f)
	}
	run := func(f *fold) {
		for i := range entries {
			if entries[i].Seq < f.next {
				continue // applied already
			}
			if err := f.p.Apply(f.tb, &entries[i]); err != nil {
				f.failed, f.at = err, entries[i].Seq
				return
			}
			if f.tb.misused {
				f.failed, f.at = errors.New("Apply used a cursor: folds read and write by key"), entries[i].Seq
				return
			}
			f.s.through = entries[i].Seq
		}
		f.ops = f.tb.prepare()
	}
	if len(entries) >= parallelFold && len(folds) > 1 {
		var wg sync.WaitGroup
		for _, f := range folds {
			wg.Add(1)
			go func() { defer wg.Done(); run(f) }()
		}
		wg.Wait()
	} else {
		for _, f := range folds {
			run(f)
		}
	}
	return folds, behind
}

// foldedStates returns the states ps would have once entries (the next
// after the committed head) were committed, without writing: a fold in
// memory over tx, a read transaction. A fold that fails, or a projection
// broken or behind, is left out.
func foldedStates(tx *bolt.Tx, ps []Projection, entries []Entry) []ProjectionState {
	folds, _ := runFolds(tx, ps, entries)
	var out []ProjectionState
	for _, f := range folds {
		if f.failed == nil {
			out = append(out, ProjectionState{Name: f.p.Name(), Version: f.p.Version(), Through: f.s.through, Root: f.s.root})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// parseEntries parses raw entries for the folds (parseForFold), on all
// cores for a large batch.
func parseEntries(first uint64, raws [][]byte) ([]Entry, error) {
	entries := make([]Entry, len(raws))
	parse := func(lo, hi int) error {
		in := newInterner()
		for i := lo; i < hi; i++ {
			seq := first + uint64(i)
			e, err := parseForFold(raws[i], in)
			if err != nil {
				return &IntegrityError{Seq: seq, Kind: KindUnreadable, Detail: "entry does not parse: " + err.Error()}
			}
			if e.Seq != seq {
				return &IntegrityError{Seq: seq, Kind: KindSeqMismatch, Detail: fmt.Sprintf("entry stored under key %d says seq %d", seq, e.Seq),
					Expected: fmt.Sprint(seq), Found: fmt.Sprint(e.Seq)}
			}
			entries[i] = e
		}
		return nil
	}
	if len(raws) < parallelFold {
		return entries, parse(0, len(raws))
	}
	n := runtime.GOMAXPROCS(0)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for w := 0; w < n; w++ {
		lo, hi := len(raws)*w/n, len(raws)*(w+1)/n
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[w] = faultless(func() error { return parse(lo, hi) })
		}()
	}
	wg.Wait()
	return entries, errors.Join(errs...)
}

// markBroken empties a projection whose fold failed and records why (the
// error goes to the state's version field after a NUL, for the message).
func markBroken(tx *bolt.Tx, name string, seq uint64, version string, cause error) error {
	if err := tx.DeleteBucket(projBucketName(name)); err != nil && !errors.Is(err, bolt.ErrBucketNotFound) {
		return err
	}
	if _, err := tx.CreateBucket(projBucketName(name)); err != nil {
		return err
	}
	s := projState{through: seq, broken: true, version: version + "\x00" + fmt.Sprintf("entry %d: %v", seq, cause)}
	return tx.Bucket(bucketProjState).Put([]byte(name), s.encode())
}

// prepareProjections, on a ledger opened for writing, creates the
// projections' buckets and brings each up to the head: folded from the
// start when missing, of another version, or broken; caught up when
// behind. Buckets of projections no longer given are left as they are.
func (l *Ledger) prepareProjections(head uint64) error {
	if len(l.opts.Projections) == 0 {
		return nil
	}
	// Most opens find every projection current: a read transaction
	// says so without the write transaction's commit and fsync.
	current := true
	if err := l.db.View(func(tx *bolt.Tx) error {
		st := tx.Bucket(bucketProjState)
		for _, p := range l.opts.Projections {
			if st == nil {
				current = false
				return nil
			}
			s, ok := decodeProjState(st.Get([]byte(p.Name())))
			if !ok || tx.Bucket(projBucketName(p.Name())) == nil || s.broken || s.version != p.Version() || s.through < head {
				current = false
				return nil
			}
		}
		return nil
	}); err != nil || current {
		return err
	}
	var stale []Projection
	err := l.db.Update(func(tx *bolt.Tx) error {
		st, err := tx.CreateBucketIfNotExists(bucketProjState)
		if err != nil {
			return err
		}
		for _, p := range l.opts.Projections {
			s, ok := decodeProjState(st.Get([]byte(p.Name())))
			b := tx.Bucket(projBucketName(p.Name()))
			if !ok || b == nil || s.broken || s.version != p.Version() {
				if err := resetProjection(tx, p); err != nil {
					return err
				}
				stale = append(stale, p)
			} else if s.through < head {
				stale = append(stale, p)
			}
		}
		return nil
	})
	if err != nil || len(stale) == 0 {
		return err
	}
	return l.foldProjections(stale, head, nil)
}

// resetProjection empties a projection's bucket and state.
func resetProjection(tx *bolt.Tx, p Projection) error {
	if err := tx.DeleteBucket(projBucketName(p.Name())); err != nil && !errors.Is(err, bolt.ErrBucketNotFound) {
		return err
	}
	if _, err := tx.CreateBucket(projBucketName(p.Name())); err != nil {
		return err
	}
	st, err := tx.CreateBucketIfNotExists(bucketProjState)
	if err != nil {
		return err
	}
	return st.Delete([]byte(p.Name()))
}

// defaultFoldBatch is how many entries one catch-up or rebuild
// transaction folds (Options.foldBatch for tests).
const defaultFoldBatch = 65536

// foldProjections folds the committed entries each projection of ps has
// not seen, up to head, in transactions of foldBatch entries. While one
// batch folds, the next is read (in a read transaction of its own, copied
// out of the memory map) and parsed. check, if set, is called at each
// ledger.checkpoint entry with the roots of ps folded through the entry
// before it.
func (l *Ledger) foldProjections(ps []Projection, head uint64, check func(cp *Entry, roots map[string]Root)) error {
	from := head + 1
	err := l.view(func(tx *bolt.Tx) error {
		st := tx.Bucket(bucketProjState)
		for _, p := range ps {
			start := uint64(0)
			if s, ok := decodeProjState(st.Get([]byte(p.Name()))); ok {
				start = s.through + 1
			}
			from = min(from, start)
		}
		return nil
	})
	if err != nil || from > head {
		return err
	}
	foldBatch := uint64(defaultFoldBatch)
	if l.opts.foldBatch > 0 {
		foldBatch = uint64(l.opts.foldBatch)
	}
	type chunk struct {
		entries []Entry
		err     error
	}
	chunks := make(chan chunk, 1)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		defer close(chunks)
		for seq := from; seq <= head; seq = min(head, seq+foldBatch-1) + 1 {
			select {
			case <-stop:
				return // the fold failed: read no further
			default:
			}
			entries, err := l.readForFold(seq, min(head, seq+foldBatch-1))
			select {
			case chunks <- chunk{entries, err}:
			case <-stop:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range chunks {
		if c.err != nil {
			return fmt.Errorf("fold projections: %w", c.err)
		}
		err := l.db.Update(func(tx *bolt.Tx) error {
			es, lo := c.entries, 0
			for j := range es {
				if check != nil && es[j].Type == TypeCheckpoint {
					if err := applyProjections(tx, ps, es[lo:j]); err != nil {
						return err
					}
					check(&es[j], projectionRoots(tx, ps))
					lo = j
				}
			}
			return applyProjections(tx, ps, es[lo:])
		})
		if err != nil {
			return fmt.Errorf("fold projections: %w", err)
		}
	}
	return nil
}

// readForFold reads and parses the entries from..to, copied out of the
// memory map in one allocation: the read transaction ends before they
// fold, so a write can grow (and remap) the file meanwhile.
func (l *Ledger) readForFold(from, to uint64) ([]Entry, error) {
	var raws [][]byte
	err := l.view(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketEntries).Cursor()
		size, seq := 0, from
		for k, v := c.Seek(seqKey(from)); k != nil && len(k) == 8 && beUint64(k) <= to; k, v = c.Next() {
			if beUint64(k) != seq {
				break
			}
			raws = append(raws, v)
			size += len(v)
			seq++
		}
		if seq <= to {
			return fmt.Errorf("entry %d: %w: missing", seq, ErrNotFound)
		}
		arena := make([]byte, 0, size)
		for i, v := range raws {
			arena = append(arena, v...)
			raws[i] = arena[len(arena)-len(v) : len(arena) : len(arena)] // an append to one cannot overwrite the next
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return parseEntries(from, raws)
}

// projectionRoots returns the roots of ps as tx sees them.
func projectionRoots(tx *bolt.Tx, ps []Projection) map[string]Root {
	st := tx.Bucket(bucketProjState)
	out := make(map[string]Root, len(ps))
	for _, p := range ps {
		s, _ := decodeProjState(st.Get([]byte(p.Name())))
		out[p.Name()] = s.root
	}
	return out
}

// ProjectionState is what the ledger says of one projection.
type ProjectionState struct {
	Name    string
	Version string
	Through uint64 // the last entry folded into it
	Root    Root
	Broken  string // why its fold failed, "" if it did not
}

// Projections returns the state of every projection the file holds.
func (l *Ledger) Projections() ([]ProjectionState, error) {
	var out []ProjectionState
	err := l.view(func(tx *bolt.Tx) error {
		out = projectionStates(tx)
		return nil
	})
	return out, err
}

// projectionStates returns what p._state records, in name order.
func projectionStates(tx *bolt.Tx) []ProjectionState {
	st := tx.Bucket(bucketProjState)
	if st == nil {
		return nil
	}
	var out []ProjectionState
	st.ForEach(func(k, v []byte) error {
		s, ok := decodeProjState(v)
		if !ok {
			return nil
		}
		ps := ProjectionState{Name: string(k), Version: s.version, Through: s.through, Root: s.root}
		if s.broken {
			ps.Version, ps.Broken, _ = strings.Cut(s.version, "\x00") // version NUL reason
		}
		out = append(out, ps)
		return nil
	})
	return out
}
