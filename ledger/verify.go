package ledger

import (
	"encoding/json"
	"fmt"
	"runtime"
	"sort"
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
	// parses, in seq order, on the reading goroutine; an error it returns
	// is reported as KindCausality at that entry. It is where rules that
	// span entries (nothing executes before its verdict) are checked.
	CheckOrder func(e *Entry) error
	// CheckEnd, if set and Strict (with CheckOrder), is called once after
	// the last entry CheckOrder saw, for rules whose second half never
	// came (a rollback plan with no outcome). Its findings are reported
	// as given.
	CheckEnd func() []*IntegrityError
}

// Report is the outcome of a verification. Its JSON form is normative
// (`opx ledger verify --json`).
type Report struct {
	OK       bool              `json:"ok"`
	Entries  uint64            `json:"entries"`
	HeadSeq  uint64            `json:"head_seq"`
	HeadHash string            `json:"head_hash"`
	Failures []*IntegrityError `json:"failures"`
}

// Err returns nil for a clean report, else an error wrapping ErrIntegrity
// that names the first failure and the count.
func (r *Report) Err() error {
	if len(r.Failures) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %d failure(s), first: %v", ErrIntegrity, len(r.Failures), r.Failures[0])
}

// Kinds returns the distinct failure kinds in the report, sorted.
func (r *Report) Kinds() []Kind {
	seen := map[Kind]bool{}
	var out []Kind
	for _, f := range r.Failures {
		if !seen[f.Kind] {
			seen[f.Kind] = true
			out = append(out, f.Kind)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

const chunkSize = 4096

// item is one entry to check. In a store, key is the bucket key; in a
// stream it is the position-derived guess, replaced by the entry's own seq
// when it parses.
type item struct {
	key uint64
	raw []byte
	bad string // set by the feeder for input it already knows is broken
}

type chunk struct {
	idx   int
	items []item
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
	failures    []*IntegrityError
	refs        map[Hash]uint64
	pruned      []Hash
}

// checker runs the per-entry checks on all cores and joins the chain
// across chunk boundaries. Every entry carries its prev, so each chunk is
// checked independently and only the boundary links are joined in order.
type checker struct {
	opts    VerifyOptions
	stream  bool // keys come from the entries themselves
	results []*chunkResult
	mu      sync.Mutex
	work    chan chunk
	wg      sync.WaitGroup
	done    atomic.Uint64
	total   uint64
	ordered []*IntegrityError // CheckOrder findings, from the feeding goroutine
}

func newChecker(opts VerifyOptions, stream bool, total uint64) *checker {
	if opts.Workers <= 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	c := &checker{opts: opts, stream: stream, total: total, work: make(chan chunk, opts.Workers*2)}
	for i := 0; i < opts.Workers; i++ {
		c.wg.Add(1)
		go c.worker()
	}
	return c
}

func (c *checker) submit(ch chunk) {
	if c.opts.Strict && c.opts.CheckOrder != nil {
		for _, it := range ch.items {
			if it.bad != "" {
				continue
			}
			e, err := ParseEntry(it.raw)
			if err != nil {
				continue // reported by the workers
			}
			if err := c.opts.CheckOrder(&e); err != nil {
				c.ordered = append(c.ordered, &IntegrityError{Seq: e.Seq, Kind: KindCausality, Detail: err.Error()})
			}
		}
	}
	c.work <- ch
}

// finish waits for the workers and joins the chunks into a report.
func (c *checker) finish(from uint64, firstPrev *Hash) (*Report, map[Hash]uint64, map[Hash]bool) {
	close(c.work)
	c.wg.Wait()
	r := &Report{Failures: []*IntegrityError{}}
	refs := map[Hash]uint64{}
	pruned := map[Hash]bool{}
	var prev *link
	for _, res := range c.results {
		if res == nil || res.n == 0 {
			continue
		}
		r.Failures = append(r.Failures, res.failures...)
		if prev == nil {
			if res.first.key != from {
				if res.first.key > from {
					r.Failures = append(r.Failures, gapFailure(from, res.first.key))
				} else {
					r.Failures = append(r.Failures, &IntegrityError{Seq: res.first.key, Kind: KindSeqMismatch,
						Detail: fmt.Sprintf("first entry has seq %d, expected %d", res.first.key, from)})
				}
			} else if res.first.ok && firstPrev != nil && res.first.prev != *firstPrev {
				r.Failures = append(r.Failures, &IntegrityError{Seq: res.first.key, Kind: KindHashMismatch,
					Detail:   fmt.Sprintf("prev is %s, expected %s", res.first.prev, *firstPrev),
					Expected: firstPrev.String(), Found: res.first.prev.String()})
			}
		} else if f := checkLink(*prev, res.first); f != nil {
			r.Failures = append(r.Failures, f)
		}
		last := res.last
		prev = &last
		r.Entries += uint64(res.n)
		for h, seq := range res.refs {
			if old, ok := refs[h]; !ok || seq < old {
				refs[h] = seq
			}
		}
		for _, h := range res.pruned {
			pruned[h] = true
		}
	}
	if prev != nil {
		r.HeadSeq = prev.key
		r.HeadHash = prev.hash.String()
	}
	if c.opts.Strict && c.opts.CheckOrder != nil && c.opts.CheckEnd != nil {
		c.ordered = append(c.ordered, c.opts.CheckEnd()...)
	}
	r.Failures = append(r.Failures, c.ordered...)
	return r, refs, pruned
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
	for ch := range c.work {
		res := c.checkChunk(ch)
		c.mu.Lock()
		for len(c.results) <= ch.idx {
			c.results = append(c.results, nil)
		}
		c.results[ch.idx] = res
		c.mu.Unlock()
		done := c.done.Add(uint64(len(ch.items)))
		if c.opts.Progress != nil {
			c.opts.Progress(done, c.total)
		}
	}
}

func (c *checker) checkChunk(ch chunk) *chunkResult {
	res := &chunkResult{n: len(ch.items)}
	fail := func(seq uint64, kind Kind, detail string) {
		res.failures = append(res.failures, &IntegrityError{Seq: seq, Kind: kind, Detail: detail})
	}
	var prev link
	for i, it := range ch.items {
		l := link{key: it.key, hash: Sum(it.raw)}
		if c.stream && i > 0 {
			l.key = prev.key + 1 // best guess until the entry tells
		}
		var e Entry
		var err error
		if it.bad != "" {
			fail(l.key, KindUnreadable, it.bad)
		} else if e, err = ParseEntry(it.raw); err != nil {
			fail(l.key, KindUnreadable, "entry does not parse: "+err.Error())
		} else {
			l.ok, l.prev = true, e.Prev
			if c.stream {
				l.key = e.Seq
			} else if e.Seq != it.key {
				res.failures = append(res.failures, &IntegrityError{Seq: it.key, Kind: KindSeqMismatch,
					Detail:   fmt.Sprintf("entry stored under key %d says seq %d", it.key, e.Seq),
					Expected: fmt.Sprint(it.key), Found: fmt.Sprint(e.Seq)})
			}
			c.checkEntry(&e, l.key, res, fail)
		}
		if i == 0 {
			res.first = l
		} else if f := checkLink(prev, l); f != nil {
			res.failures = append(res.failures, f)
		}
		prev = l
	}
	res.last = prev
	return res
}

// checkEntry runs the checks that need only the entry itself.
func (c *checker) checkEntry(e *Entry, seq uint64, res *chunkResult, fail func(uint64, Kind, string)) {
	if e.Seq == 0 && !e.Prev.IsZero() {
		res.failures = append(res.failures, &IntegrityError{Seq: 0, Kind: KindHashMismatch,
			Detail: "genesis prev is not all zeros", Expected: ZeroHash.String(), Found: e.Prev.String()})
	}
	if c.opts.Strict {
		if !IsCanonical(e.Raw) {
			fail(seq, KindNotCanonical, "entry bytes are not in canonical (RFC 8785) form")
		}
		if err := checkPayload(e, c.opts.CheckPayload); err != nil {
			fail(seq, KindUnreadable, "payload: "+err.Error())
		}
	}
	refs, err := BlobRefs(e.Data)
	if err != nil {
		fail(seq, KindUnreadable, "data: "+err.Error())
	}
	for _, h := range refs {
		if res.refs == nil {
			res.refs = map[Hash]uint64{}
		}
		if _, ok := res.refs[h]; !ok {
			res.refs[h] = seq
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
		c := newChecker(opts, false, metaHead.Seq+1)
		readFailure = feedStore(tx, c)
		r, refs, pruned = c.finish(0, nil)
		blobFailures = checkBlobs(opts.Workers, refs, pruned, func(h Hash) []byte {
			return tx.Bucket(bucketBlobs).Get(h[:])
		})
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
func feedStore(tx *bolt.Tx, c *checker) (failure *IntegrityError) {
	var next uint64
	idx := 0
	items := make([]item, 0, chunkSize)
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
	for k, v := cur.First(); k != nil; k, v = cur.Next() {
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
			items = make([]item, 0, chunkSize)
		}
	}
	return failure
}

func beUint64(b []byte) uint64 {
	return uint64(b[0])<<56 | uint64(b[1])<<48 | uint64(b[2])<<40 | uint64(b[3])<<32 |
		uint64(b[4])<<24 | uint64(b[5])<<16 | uint64(b[6])<<8 | uint64(b[7])
}

// checkBlobs checks every named blob in parallel: present (or pruned) and
// hashing to its key. get returns the stored zstd frame or nil.
func checkBlobs(workers int, refs map[Hash]uint64, pruned map[Hash]bool, get func(Hash) []byte) []*IntegrityError {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	hashes := make([]Hash, 0, len(refs))
	for h := range refs {
		hashes = append(hashes, h)
	}
	var mu sync.Mutex
	var out []*IntegrityError
	var wg sync.WaitGroup
	next := atomic.Int64{}
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(hashes) {
					return
				}
				h := hashes[i]
				var f *IntegrityError
				zst := get(h)
				switch {
				case zst == nil && pruned[h]:
				case zst == nil:
					f = &IntegrityError{Seq: refs[h], Kind: KindMissingBlob,
						Detail: fmt.Sprintf("blob %s named by entry %d is not stored", h, refs[h]), Expected: h.String()}
				default:
					if _, err := decodeBlob(h, zst); err != nil {
						f = err.(*IntegrityError)
						f.Seq = refs[h]
					}
				}
				if f != nil {
					mu.Lock()
					out = append(out, f)
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return out
}

// finish sorts failures (by seq, then kind) and sets OK.
func (r *Report) finish() {
	sort.SliceStable(r.Failures, func(i, j int) bool {
		a, b := r.Failures[i], r.Failures[j]
		if a.Seq != b.Seq {
			return a.Seq < b.Seq
		}
		return a.Kind < b.Kind
	})
	r.OK = len(r.Failures) == 0
}
