package ledger

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	bolt "go.etcd.io/bbolt"
)

// VerifyOptions tune Verify and the stream verifiers.
type VerifyOptions struct {
	// Strict adds the canonical-form check and payload checks.
	Strict bool
	// Workers is the number of hashing goroutines; default GOMAXPROCS.
	Workers int
	// Progress, if set, is called now and then with entries checked so far
	// and the expected total (0 when unknown).
	Progress func(done, total uint64)
	// CheckPayload, if set and Strict, is called for each entry and
	// reports a payload that lacks its type's expected fields.
	CheckPayload func(typ string, data []byte) error
	// CheckOrder, if set and Strict, is called for every entry that
	// parses, in seq order, one call at a time (on whichever worker joins
	// the entry's chunk, with the entry that worker parsed); an error it
	// returns is reported as KindCausality at that entry. It is where
	// rules that span entries (nothing executes before its verdict) are
	// checked. The entry's Data, Raw and TS share the bytes read (a
	// store's mapped pages) and are valid during the call only: what is
	// kept must be copied.
	CheckOrder func(e *Entry) error
	// CheckEnd, if set and Strict (with CheckOrder), is called once after
	// the last entry CheckOrder saw, for rules whose second half never
	// came (a rollback plan with no outcome). Its findings are reported
	// as given.
	CheckEnd func() []*IntegrityError
	// CheckCheckpoint, if set, is called (Strict or not) for each
	// ledger.checkpoint entry whose tree fields match the tree computed
	// from the entries, with its seq, that tree and its note ("" when it
	// has none); an error it returns is a failure at seq (KindCheckpoint).
	CheckCheckpoint func(seq uint64, th TreeHead, note string) error
	// TreeRange is the compact range [0,from) of the tree (RangeHashesAt)
	// for a stream that starts at seq from > 0, so that the roots it
	// records can be checked; without it they are not (Report.TreeUnchecked).
	TreeRange [][]byte
	// CheckpointKey, if set, is the verifier key (note format) an
	// export's bundled checkpoint must be signed by, pinned by whoever
	// verifies; without it the key bundled beside the checkpoint is used,
	// which proves only that the export agrees with its own bundle.
	CheckpointKey string
}

const chunkSize = 4096

// item is one entry to check. In a store, key is the bucket key; in a
// stream it is the position-derived guess, replaced by the entry's own seq
// when it parses.
type item struct {
	key  uint64
	raw  []byte
	bad  string // set by the feeder for input it already knows is broken
	line uint64 // stream: the line number, for bad's detail
}

type chunk struct {
	idx    int
	items  []item
	weight int64       // bytes held from the checker's budget (stream mode)
	tiles  *chunkTiles // a store's tiles covering the chunk (tree_verify.go)
}

// link is what a chunk exposes to its neighbours for the chain check.
type link struct {
	key  uint64
	prev Hash // stored prev (valid when parsed)
	hash Hash // hash of the bytes
	ok   bool // parsed
}

type chunkResult struct {
	n           int
	first, last link
	failures    []*IntegrityError // the first MaxListedFailures found
	more        map[Kind]uint64   // counts of those found beyond them
	refs        map[Hash]uint64
	pruned      []Hash
	tree        *chunkTree
	// ordered are the chunk's entries that parse, in order, kept for
	// CheckOrder (Strict), which join runs on them: each entry is parsed
	// once, by the worker, not again on the feeder.
	ordered []Entry
	weight  int64 // bytes of the checker's budget the chunk holds until joined
}

// full reports whether the chunk already lists as many failures as a
// report can; if so it counts one more of kind instead. A chunk of junk
// (millions of empty lines) thus costs a count, not a failure each.
func (r *chunkResult) full(kind Kind) bool {
	if len(r.failures) < MaxListedFailures {
		return false
	}
	if r.more == nil {
		r.more = map[Kind]uint64{}
	}
	r.more[kind]++
	return true
}

// push records a failure, or counts it when the chunk is full.
func (r *chunkResult) push(f *IntegrityError) {
	if !r.full(f.Kind) {
		r.failures = append(r.failures, f)
	}
}

// Stream verification holds at most streamInflight bytes of lines queued
// for or inside the workers (plus the chunk being filled, at most
// streamChunkBytes plus one line), so memory does not grow with the
// input, however long or short its lines.
const (
	streamChunkBytes = 4 << 20
	streamInflight   = 48 << 20
)

// checker runs the per-entry checks on all cores and joins the chain
// across chunk boundaries. Every entry carries its prev, so each chunk is
// checked independently and only the boundary links are joined, in order,
// as soon as a chunk's predecessors are joined: a chunk's result is
// dropped once joined, so memory stays bounded by what is in flight.
type checker struct {
	opts   VerifyOptions
	stream bool // keys come from the entries themselves
	work   chan chunk
	wg     sync.WaitGroup
	done   atomic.Uint64
	total  uint64
	budget *byteBudget // stream mode only
	// slots bounds the chunks submitted and not yet joined: a joined
	// chunk frees its slot. Without it, a worker slow on one chunk (huge
	// entries) would let the others run ahead, and the results waiting
	// for it to join (each with its parsed entries, for CheckOrder)
	// would grow with the ledger.
	slots chan struct{}
	// tree is the Merkle tree being recomputed (tree_verify.go); treeEnd,
	// if set, checks what only the end can (a store's tiles).
	tree    *treeCheck
	treeEnd func() []*IntegrityError

	mu        sync.Mutex // guards everything below
	pending   map[int]*chunkResult
	nextJoin  int
	from      uint64
	firstPrev *Hash
	prev      *link
	rep       *Report
	refs      map[Hash]uint64
	pruned    map[Hash]bool
}

func newChecker(opts VerifyOptions, stream bool, total uint64, from uint64, firstPrev *Hash) *checker {
	if opts.Workers <= 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	c := &checker{opts: opts, stream: stream, total: total, work: make(chan chunk, opts.Workers*2),
		pending: map[int]*chunkResult{}, from: from, firstPrev: firstPrev,
		rep: &Report{Failures: []*IntegrityError{}}, refs: map[Hash]uint64{}, pruned: map[Hash]bool{},
		slots: make(chan struct{}, opts.Workers*4)}
	if stream {
		c.budget = newByteBudget(streamInflight)
	}
	var err error
	if c.tree, err = newTreeCheck(from, opts.TreeRange); err != nil {
		c.tree = &treeCheck{}
		c.rep.add(&IntegrityError{Seq: from, Kind: KindTreeMismatch, Detail: "the tree range given for the start: " + err.Error()})
	}
	for i := 0; i < opts.Workers; i++ {
		c.wg.Add(1)
		go c.worker()
	}
	return c
}

// ordering reports whether the checker runs CheckOrder.
func (c *checker) ordering() bool { return c.opts.Strict && c.opts.CheckOrder != nil }

func (c *checker) submit(ch chunk) {
	c.slots <- struct{}{} // freed by join
	if c.budget != nil {
		var n int64
		for _, it := range ch.items {
			n += int64(len(it.raw))
		}
		ch.weight = c.budget.acquire(n)
	}
	c.attachTiles(&ch)
	c.work <- ch
}

// finish waits for the workers and returns the report (not yet finished:
// the caller adds what it checks beyond the entries, then calls
// Report.finish), the blobs the entries name (each with the first seq
// naming it) and the blobs pruned entries list.
func (c *checker) finish() (*Report, map[Hash]uint64, map[Hash]bool) {
	close(c.work)
	c.wg.Wait()
	if c.opts.Strict && c.opts.CheckOrder != nil && c.opts.CheckEnd != nil {
		for _, f := range c.opts.CheckEnd() {
			c.rep.add(f)
		}
	}
	if c.treeEnd != nil {
		for _, f := range c.treeEnd() {
			c.rep.add(f)
		}
	}
	c.rep.TreeUnchecked = c.tree.unchecked
	if c.prev != nil {
		c.rep.HeadSeq = c.prev.key
		c.rep.HeadHash = c.prev.hash.String()
	}
	return c.rep, c.refs, c.pruned
}

// join folds the results of chunk idx and of every following chunk that
// is ready into the report, in chunk order. Called with c.mu held.
func (c *checker) join(idx int, res *chunkResult) {
	c.pending[idx] = res
	for {
		res, ok := c.pending[c.nextJoin]
		if !ok {
			return
		}
		delete(c.pending, c.nextJoin)
		c.nextJoin++
		<-c.slots
		// Every entry that parses, in seq order: chunks join in order.
		for i := range res.ordered {
			if err := c.opts.CheckOrder(&res.ordered[i]); err != nil {
				c.rep.add(&IntegrityError{Seq: res.ordered[i].Seq, Kind: KindCausality, Detail: err.Error()})
			}
		}
		releaseOrdered(res.ordered)
		res.ordered = nil
		if c.budget != nil {
			c.budget.release(res.weight)
		}
		if res.n == 0 {
			continue
		}
		r := c.rep
		for _, f := range res.failures {
			r.add(f)
		}
		for k, n := range res.more {
			r.count(k, n)
		}
		if c.prev == nil {
			if res.first.key != c.from {
				if res.first.key > c.from {
					r.add(gapFailure(c.from, res.first.key))
				} else {
					r.add(&IntegrityError{Seq: res.first.key, Kind: KindSeqMismatch,
						Detail: fmt.Sprintf("first entry has seq %d, expected %d", res.first.key, c.from)})
				}
			} else if res.first.ok && c.firstPrev != nil && res.first.prev != *c.firstPrev {
				r.add(&IntegrityError{Seq: res.first.key, Kind: KindHashMismatch,
					Detail:   fmt.Sprintf("prev is %s, expected %s", res.first.prev, *c.firstPrev),
					Expected: c.firstPrev.String(), Found: res.first.prev.String()})
			}
		} else if f := checkLink(*c.prev, res.first); f != nil {
			r.add(f)
		}
		last := res.last
		c.prev = &last
		r.Entries += uint64(res.n)
		c.joinTree(res.tree)
		for h, seq := range res.refs {
			if old, ok := c.refs[h]; !ok || seq < old {
				c.refs[h] = seq
			}
		}
		for _, h := range res.pruned {
			c.pruned[h] = true
		}
	}
}

// byteBudget is a counting semaphore of bytes.
type byteBudget struct {
	mu   sync.Mutex
	cond *sync.Cond
	free int64
	max  int64
}

func newByteBudget(n int64) *byteBudget {
	b := &byteBudget{free: n, max: n}
	b.cond = sync.NewCond(&b.mu)
	return b
}

// acquire takes n bytes (at most the whole budget, so one chunk larger
// than the budget still goes through, alone) and returns what it took.
func (b *byteBudget) acquire(n int64) int64 {
	n = min(n, b.max)
	b.mu.Lock()
	for b.free < n {
		b.cond.Wait()
	}
	b.free -= n
	b.mu.Unlock()
	return n
}

func (b *byteBudget) release(n int64) {
	b.mu.Lock()
	b.free += n
	b.cond.Broadcast()
	b.mu.Unlock()
}

func gapFailure(from, next uint64) *IntegrityError {
	detail := fmt.Sprintf("entry %d missing", from)
	if next-from > 1 {
		detail = fmt.Sprintf("entries %d..%d missing", from, next-1)
	}
	return &IntegrityError{Seq: from, Kind: KindGap, Detail: detail}
}

// checkLink checks that b follows a: consecutive seqs and b.prev equal to
// the hash of a's bytes.
func checkLink(a, b link) *IntegrityError {
	switch {
	case b.key == a.key+1:
		if b.ok && b.prev != a.hash {
			return &IntegrityError{Seq: b.key, Kind: KindHashMismatch,
				Detail:   fmt.Sprintf("prev is %s but entry %d hashes to %s (entry %d or this prev was altered)", b.prev, a.key, a.hash, a.key),
				Expected: a.hash.String(), Found: b.prev.String()}
		}
	case b.key > a.key+1:
		return gapFailure(a.key+1, b.key)
	default:
		return &IntegrityError{Seq: b.key, Kind: KindSeqMismatch,
			Detail: fmt.Sprintf("entry %d follows entry %d: out of order or duplicated", b.key, a.key)}
	}
	return nil
}

func (c *checker) worker() {
	defer c.wg.Done()
	// Store items point into the file's map: a damaged file faults here.
	defer catchFaults()()
	for ch := range c.work {
		res := c.safeCheckChunk(ch)
		releaseItems(ch.items)
		ch.items = nil
		res.weight = ch.weight // released when joined: its entries are held until then
		c.mu.Lock()
		c.join(ch.idx, res)
		c.mu.Unlock()
		done := c.done.Add(uint64(res.n))
		if c.opts.Progress != nil {
			c.opts.Progress(done, c.total)
		}
	}
}

// safeCheckChunk is checkChunk with a fault or panic on a damaged file
// reported as the chunk being unreadable.
func (c *checker) safeCheckChunk(ch chunk) (res *chunkResult) {
	defer func() {
		if r := recover(); r != nil {
			first, last := ch.items[0].key, ch.items[len(ch.items)-1].key
			res = &chunkResult{n: len(ch.items), first: link{key: first}, last: link{key: last},
				failures: []*IntegrityError{{Seq: first, Kind: KindUnreadable,
					Detail: fmt.Sprintf("entries %d..%d do not read (the file is damaged): %v", first, last, r)}}}
		}
	}()
	return c.checkChunk(ch)
}

func (c *checker) checkChunk(ch chunk) *chunkResult {
	res := &chunkResult{n: len(ch.items)}
	fail := func(seq uint64, kind Kind, detail string) {
		res.push(&IntegrityError{Seq: seq, Kind: kind, Detail: detail})
	}
	var prev link
	var lh leafHasher
	var scratch []byte
	// The default verify reads no timestamp: it is checked, not kept.
	strs := &entryStrings{lean: !c.opts.Strict, shareTS: c.opts.Strict, canon: c.opts.Strict}
	leaves := make([][32]byte, len(ch.items)) // the chunk's range keeps slices of it
	cols := chunkColumns.Get().(*columns)
	defer chunkColumns.Put(cols)
	types, datas, seqs := cols.reset(len(ch.items))
	for i, it := range ch.items {
		l := link{key: it.key, hash: Sum(it.raw)}
		leaves[i] = lh.sum(it.raw)
		if c.stream && i > 0 {
			l.key = prev.key + 1 // best guess until the entry tells
		}
		var e Entry
		var err error
		if it.bad != "" {
			if !res.full(KindUnreadable) {
				fail(l.key, KindUnreadable, fmt.Sprintf("line %d: %s", it.line, it.bad))
			}
		} else if e, err = parseEntry(it.raw, strs); err != nil {
			if !res.full(KindUnreadable) {
				fail(l.key, KindUnreadable, "entry does not parse: "+err.Error())
			}
		} else {
			l.ok, l.prev = true, e.Prev
			if c.stream {
				l.key = e.Seq
			} else if e.Seq != it.key {
				res.push(&IntegrityError{Seq: it.key, Kind: KindSeqMismatch,
					Detail:   fmt.Sprintf("entry stored under key %d says seq %d", it.key, e.Seq),
					Expected: fmt.Sprint(it.key), Found: fmt.Sprint(e.Seq)})
			}
			c.checkEntry(&e, strs.dataBlob, strs.canonical, l.key, res, fail, &scratch)
			types[i], datas[i], seqs[i] = e.Type, e.Data, e.Seq
			if c.ordering() {
				if res.ordered == nil {
					res.ordered = orderedEntries(len(ch.items))
				}
				res.ordered = append(res.ordered, e)
			}
		}
		if i == 0 {
			res.first = l
		} else if f := checkLink(prev, l); f != nil {
			res.push(f)
		}
		prev = l
	}
	res.last = prev
	c.treeChunk(ch, leaves, types, datas, seqs, res)
	return res
}

// checkEntry runs the checks that need only the entry itself. blob is
// whether the entry's data holds the bytes `blob"` (parseEntry saw them
// or not): without them it names no blob, and both blob readers would
// only search the data for them again. canonical is whether parseEntry
// found the entry in canonical form on the way (strict: false leaves it
// to isCanonical). scratch is the worker's buffer for the canonical-form
// check.
func (c *checker) checkEntry(e *Entry, blob, canonical bool, seq uint64, res *chunkResult, fail func(uint64, Kind, string), scratch *[]byte) {
	if e.Seq == 0 && !e.Prev.IsZero() {
		res.push(&IntegrityError{Seq: 0, Kind: KindHashMismatch,
			Detail: "genesis prev is not all zeros", Expected: ZeroHash.String(), Found: e.Prev.String()})
	}
	if c.opts.Strict {
		if canonical = canonical || isCanonical(e.Raw, scratch); !canonical {
			fail(seq, KindNotCanonical, "entry bytes are not in canonical (RFC 8785) form")
		}
		if err := checkPayload(e, c.opts.CheckPayload); err != nil {
			fail(seq, KindUnreadable, "payload: "+err.Error())
		}
	}
	ref := func(h Hash) {
		if res.refs == nil {
			res.refs = map[Hash]uint64{}
		}
		if _, ok := res.refs[h]; !ok {
			res.refs[h] = seq
		}
	}
	switch {
	case !blob: // no blob named
	case canonical:
		// Walked in place: the entry is canonical, so its data is too.
		if err := canonicalBlobRefs(e.Data, ref); err != nil {
			fail(seq, KindUnreadable, "data: "+err.Error())
		}
	default:
		refs, err := BlobRefs(e.Data)
		if err != nil {
			fail(seq, KindUnreadable, "data: "+err.Error())
		}
		for _, h := range refs {
			ref(h)
		}
	}
	if e.Type == TypePruned {
		p, err := PrunedBlobs(e.Data)
		if err != nil {
			fail(seq, KindUnreadable, "chronicle.pruned data: "+err.Error())
		}
		res.pruned = append(res.pruned, p...)
	}
}

// checkPayload is the strict check of the fields every entry and the
// ledger's own types must have; engine types are checked by extra.
func checkPayload(e *Entry, extra func(string, []byte) error) error {
	if _, err := e.Time(); err != nil || !strings.HasSuffix(e.TS, "Z") {
		return fmt.Errorf("ts %q is not RFC 3339 UTC", e.TS)
	}
	area, event, ok := strings.Cut(e.Type, ".")
	if !ok || area == "" || event == "" {
		return fmt.Errorf("type %q is not <area>.<event>", e.Type)
	}
	if (e.Seq == 0) != (e.Type == TypeGenesis) {
		return fmt.Errorf("type %s at seq %d: genesis must be exactly seq 0", e.Type, e.Seq)
	}
	if e.Type == TypeGenesis {
		var g struct {
			Format   string `json:"format"`
			LedgerID string `json:"ledger_id"`
			Created  string `json:"created"`
		}
		if err := unmarshalStrict(e.Data, &g); err != nil {
			return err
		}
		// encoding/json matches member names case-insensitively ("FORMAT"
		// would fill Format): the names must also be present exactly.
		var members map[string]json.RawMessage
		if err := json.Unmarshal(e.Data, &members); err != nil {
			return err
		}
		if len(members) != 3 || members["format"] == nil || members["ledger_id"] == nil || members["created"] == nil ||
			g.Format != Format || len(g.LedgerID) != 32 || strings.Trim(g.LedgerID, "0123456789abcdef") != "" || g.Created == "" {
			return fmt.Errorf("genesis needs format %q, a 32-hex ledger_id and created", Format)
		}
	}
	if extra != nil {
		return extra(e.Type, e.Data)
	}
	return nil
}

// Verify checks the whole ledger: every entry, the chain, the head and
// every blob an entry names, reporting every failure found. It returns an
// error only when verification could not run; findings are in the Report.
func (l *Ledger) Verify(opts VerifyOptions) (*Report, error) {
	var metaHead Head
	var metaErr error
	var r *Report
	var refs map[Hash]uint64
	var pruned map[Hash]bool
	var blobFailures []*IntegrityError
	var readFailure *IntegrityError
	err := l.view(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		metaHead, metaErr = readHead(meta)
		c := newChecker(opts, false, metaHead.Seq+1, 0, nil)
		c.useStoreTiles(tx)
		readFailure = feedStore(tx, c)
		r, refs, pruned = c.finish()
		blobs := tx.Bucket(bucketBlobs)
		blobFailures = checkBlobs(opts.Workers, refs, pruned, memBlobSource(func(h Hash) []byte {
			if blobs == nil {
				return nil
			}
			return blobs.Get(h[:])
		}))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("verify %s: %w", l.path, err)
	}
	if readFailure != nil {
		r.Failures = append(r.Failures, readFailure)
	}
	if r.Entries == 0 {
		// Every ledger holds at least its genesis: an empty entries
		// bucket is the whole chain deleted, not a clean ledger.
		r.Failures = append(r.Failures, &IntegrityError{Seq: 0, Kind: KindGap,
			Detail: fmt.Sprintf("no entries stored (meta head is %d)", metaHead.Seq)})
	}
	switch {
	case metaErr != nil:
		r.Failures = append(r.Failures, &IntegrityError{Seq: r.HeadSeq, Kind: KindHeadMismatch, Detail: metaErr.Error()})
	case r.Entries > 0 && (metaHead.Seq != r.HeadSeq || metaHead.Hash.String() != r.HeadHash):
		r.Failures = append(r.Failures, &IntegrityError{Seq: r.HeadSeq, Kind: KindHeadMismatch,
			Detail:   fmt.Sprintf("meta says head %d %s, last entry is %d %s", metaHead.Seq, metaHead.Hash, r.HeadSeq, r.HeadHash),
			Expected: metaHead.Hash.String(), Found: r.HeadHash})
	}
	r.Failures = append(r.Failures, blobFailures...)
	r.finish()
	return r, nil
}

// feedStore walks the entries bucket and hands chunks to the checker. The
// item bytes point into the mmap, valid until the transaction ends, which
// is after the checker finishes. A panic from a corrupt page becomes an
// unreadable finding.
func feedStore(tx *bolt.Tx, c *checker) *IntegrityError { return feedStoreFrom(tx, c, 0) }

// feedStoreFrom is feedStore from seq from on.
func feedStoreFrom(tx *bolt.Tx, c *checker, from uint64) (failure *IntegrityError) {
	next := from
	idx := 0
	items := newItems()
	defer func() {
		if r := recover(); r != nil {
			failure = &IntegrityError{Seq: next, Kind: KindUnreadable, Detail: fmt.Sprintf("file is corrupt near entry %d: %v", next, r)}
		}
		if len(items) > 0 {
			c.submit(chunk{idx: idx, items: items})
		}
	}()
	b := tx.Bucket(bucketEntries)
	if b == nil {
		return &IntegrityError{Kind: KindUnreadable, Detail: "no entries bucket"}
	}
	cur := b.Cursor()
	k, v := cur.First() // from 0: a stray key below seq 0 is reported too
	if from > 0 {
		k, v = cur.Seek(seqKey(from))
	}
	for ; k != nil; k, v = cur.Next() {
		if len(k) != 8 {
			failure = &IntegrityError{Seq: next, Kind: KindUnreadable, Detail: fmt.Sprintf("entry key %x is not 8 bytes", k)}
			continue
		}
		it := item{key: beUint64(k), raw: v}
		next = it.key + 1
		items = append(items, it)
		if len(items) == chunkSize {
			c.submit(chunk{idx: idx, items: items})
			idx++
			items = newItems()
		}
	}
	return failure
}

func beUint64(b []byte) uint64 {
	return uint64(b[0])<<56 | uint64(b[1])<<48 | uint64(b[2])<<40 | uint64(b[3])<<32 |
		uint64(b[4])<<24 | uint64(b[5])<<16 | uint64(b[6])<<8 | uint64(b[7])
}

// columns are what the tree check reads of a chunk's entries (types,
// data, seqs), one slot per entry, reused from chunk to chunk: nothing
// keeps them past checkChunk.
type columns struct {
	types []string
	datas [][]byte
	seqs  []uint64
}

var chunkColumns = sync.Pool{New: func() any { return new(columns) }}

// reset returns the columns for n entries, zeroed.
func (c *columns) reset(n int) ([]string, [][]byte, []uint64) {
	if cap(c.types) < n {
		c.types, c.datas, c.seqs = make([]string, n), make([][]byte, n), make([]uint64, n)
	}
	c.types, c.datas, c.seqs = c.types[:n], c.datas[:n], c.seqs[:n]
	clear(c.types)
	clear(c.datas)
	clear(c.seqs)
	return c.types, c.datas, c.seqs
}

// orderedPool holds the slices of entries kept for CheckOrder, returned
// when their chunk is joined: a strict verify would otherwise allocate
// (and the collector scan) a slice of entries for every chunk.
var orderedPool sync.Pool

// orderedEntries returns an empty slice of entries with room for n.
func orderedEntries(n int) []Entry {
	if p, ok := orderedPool.Get().(*[]Entry); ok && cap(*p) >= n {
		return (*p)[:0]
	}
	return make([]Entry, 0, n)
}

// releaseOrdered returns es to orderedPool, cleared so it holds no
// entry's bytes (a stream's lines) meanwhile.
func releaseOrdered(es []Entry) {
	if cap(es) == 0 {
		return
	}
	clear(es[:cap(es)])
	es = es[:0]
	orderedPool.Put(&es)
}

// itemPool holds the item slices of chunks checked, for the store's
// feeder to fill again.
var itemPool sync.Pool

// newItems returns an empty slice of items with room for a chunk.
func newItems() []item {
	if p, ok := itemPool.Get().(*[]item); ok {
		return (*p)[:0]
	}
	return make([]item, 0, chunkSize)
}

// releaseItems returns a chunk's items to itemPool, cleared: they point
// into the file's map (or a stream's lines).
func releaseItems(its []item) {
	if cap(its) != chunkSize {
		return
	}
	clear(its[:cap(its)])
	its = its[:0]
	itemPool.Put(&its)
}
