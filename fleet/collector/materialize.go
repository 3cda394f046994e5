package collector

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"time"

	"github.com/opx-dev/opx/fleet/collector/journal"
	"github.com/opx-dev/opx/ledger"
)

// # Materializing the mirrors
//
// What a batch verified is appended to the journal and synced once for
// the whole batch (commit); only then are its messages acknowledged.
// The journal's records are then handed to the materializer, which
// writes them to the mirrors behind the run loop, each source by one
// worker at a time, at most materializeRecords records
// (materializeBytes) of it in one durable commit of its mirror.
//
// A mirror's commit costs about the same whatever it carries (bbolt
// writes its pages and syncs), so a source's records wait to be
// committed together: a source is taken once matRipe records of it
// wait, or once its oldest record has waited matWait for each
// matCommitRate sources with records waiting (at most matMaxWait; none
// while the collector closes, or while what waits is more than half of
// MaxPendingBytes). So the mirrors' commits per second stay near
// matCommitRate whatever the number of sources, and the collector's cost
// per entry with them; what a source waits for its mirror grows with the
// sources (not with the entries), up to matMaxWait. Sources whose oldest
// record waited long enough are taken first, in the order their records
// came (round robin), then those with matRipe records waiting.
//
// What waits to be materialized is held in memory (the records' bytes);
// beyond MaxPendingBytes the run loop takes no more messages until the
// materializer caught up (JetStream holds the rest). A journal segment
// is removed once every record in it is in its mirror, durably, and the
// run loop has checked what needed the mirror (checkpoints' trees).

// materializeWorkers is how many mirrors are written at once.
const materializeWorkers = 4

// materializeRecords and materializeBytes bound one commit of a mirror,
// so that one flooding source holds a worker for one bounded commit at a
// time while every other source with records waiting gets its turn.
const (
	materializeRecords = 1024
	materializeBytes   = 8 << 20
)

// matRipe, matCommitRate and matMaxWait: when a source's records are
// committed to its mirror (above).
const (
	matRipe       = 256
	matCommitRate = 200
	matMaxWait    = time.Minute
)

type pendingRec struct {
	rec journal.Record
	seg uint64
	at  time.Time // when it was handed to the materializer
	// ver is the entry as the run loop checked it (checked: a mirror
	// takes it without parsing it again); recovery's records are not.
	ver     ledger.Verified
	checked bool
}

// matReport is what a worker materialized of one source from one
// segment.
type matReport struct {
	s     *source
	seg   uint64
	n     int
	blobs []ledger.Hash
	next  uint64 // the mirror's next seq after the commit
	prev  ledger.Hash
}

// materializer writes the journal's records to the mirrors.
type materializer struct {
	c      *Collector
	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	cond    *sync.Cond
	dirty   []*source // sources with records waiting, in turn
	ripe    []*source // sources with matRipe records waiting
	pending int64     // bytes of records waiting
	reports []matReport
	err     error // sticky: a mirror that failed
	closing bool
	wake    chan struct{} // the run loop: reports are there
	wg      sync.WaitGroup
	// timer wakes the workers at timerAt, when the oldest record waiting
	// will have waited long enough.
	timer   *time.Timer
	timerAt time.Time
}

func (c *Collector) startMaterializer() {
	ctx, cancel := context.WithCancel(context.Background())
	m := &materializer{c: c, ctx: ctx, cancel: cancel, wake: make(chan struct{}, 1)}
	m.cond = sync.NewCond(&m.mu)
	for range materializeWorkers {
		m.wg.Add(1)
		go m.work()
	}
	c.mat = m
}

// push hands records just made durable in the journal (segment seg) to
// the workers, in the order of each source's seqs.
func (m *materializer) push(seg uint64, recs []journal.Record, srcs []*source, vers []ledger.Verified) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	for i, r := range recs {
		s := srcs[i]
		p := pendingRec{rec: r, seg: seg, at: now}
		if r.Kind == journal.Entry && vers[i].Raw() != nil {
			p.ver, p.checked = vers[i], true
		}
		s.queue = append(s.queue, p)
		m.pending += r.Size()
		m.enqueue(s)
	}
	m.cond.Broadcast()
}

// enqueue puts s, which has records waiting, in the workers' turn and,
// once matRipe of them wait, in the ripe list (m.mu held).
func (m *materializer) enqueue(s *source) {
	if !s.queued {
		s.queued = true
		m.dirty = append(m.dirty, s)
	}
	if !s.ripe && len(s.queue) >= matRipe {
		s.ripe = true
		m.ripe = append(m.ripe, s)
	}
}

// wait is how long a source's oldest record waits before the source is
// taken, when fewer than matRipe wait (m.mu held).
func (m *materializer) wait() time.Duration {
	if m.closing || m.pending > MaxPendingBytes/2 {
		return 0
	}
	return min(time.Duration(len(m.dirty))*time.Second/matCommitRate, matMaxWait)
}

// pick returns the source a worker writes next, marked busy, or nil once
// the workers stop (m.mu held; it waits for one).
func (m *materializer) pick() *source {
	for {
		if m.err != nil {
			return nil
		}
		var at time.Time // when the dirty head will have waited enough
		for len(m.dirty) > 0 {
			s := m.dirty[0]
			if s.busy || len(s.queue) == 0 {
				// Taken as ripe meanwhile: its worker puts it back.
				m.dirty[0] = nil
				m.dirty = m.dirty[1:]
				s.queued = false
				continue
			}
			if due := s.queue[0].at.Add(m.wait()); time.Now().Before(due) {
				at = due
				break
			}
			m.dirty[0] = nil
			m.dirty = m.dirty[1:]
			s.queued = false
			s.busy = true
			return s
		}
		for len(m.ripe) > 0 {
			s := m.ripe[0]
			m.ripe[0] = nil
			m.ripe = m.ripe[1:]
			s.ripe = false
			if !s.busy && len(s.queue) > 0 {
				s.busy = true
				return s
			}
		}
		if len(m.dirty) == 0 {
			m.dirty = nil // the array is not kept
			if m.closing {
				return nil
			}
		}
		if !at.IsZero() && (m.timer == nil || at.Before(m.timerAt)) {
			if m.timer != nil {
				m.timer.Stop()
			}
			m.timerAt = at
			m.timer = time.AfterFunc(time.Until(at), func() {
				m.mu.Lock()
				m.timer = nil
				m.cond.Broadcast()
				m.mu.Unlock()
			})
		}
		m.cond.Wait()
	}
}

// pendingBytes is what waits to be materialized.
func (m *materializer) pendingBytes() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.pending
}

// next is s's mirror's next seq (0: no mirror written yet).
func (m *materializer) next(s *source) uint64 {
	if m == nil {
		return s.mat
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return s.mat
}

// queued returns the raw entry seq of s if it waits to be materialized.
func (m *materializer) queued(s *source, seq uint64) ([]byte, bool) {
	if m == nil {
		return nil, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if seq < s.mat || len(s.queue) == 0 {
		return nil, false
	}
	for _, p := range s.queue {
		if p.rec.Kind == journal.Entry && p.rec.Seq == seq {
			return p.rec.Data, true
		}
	}
	return nil, false
}

// take returns the reports since the last take, and the materializer's
// error if one failed.
func (m *materializer) take() ([]matReport, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.reports
	m.reports = nil
	return r, m.err
}

// idle reports whether nothing waits (tests, Close).
func (m *materializer) idle() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.dirty) == 0 && m.pending == 0
}

// close lets the workers finish what waits (unless one failed) and
// stops them.
func (m *materializer) close() error {
	m.mu.Lock()
	m.closing = true
	m.cond.Broadcast()
	m.mu.Unlock()
	m.wg.Wait()
	m.cancel()
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.err
}

func (m *materializer) work() {
	defer m.wg.Done()
	for {
		m.mu.Lock()
		s := m.pick()
		if s == nil {
			m.mu.Unlock()
			return
		}
		k, size := 0, int64(0)
		for k < len(s.queue) && k < materializeRecords && (k == 0 || size < materializeBytes) {
			size += s.queue[k].rec.Size()
			k++
		}
		recs := s.queue[:k:k]
		m.mu.Unlock()

		next, prev, err := m.c.apply(m.ctx, s, recs)

		m.mu.Lock()
		s.busy = false
		if errors.Is(err, ledger.ErrLocked) && !m.closing {
			// A reader holds the mirror's file (opened it directly while
			// the mirror was closed): its records wait, and the source
			// takes its turn again (the open waited for the lock).
			m.enqueue(s)
			m.cond.Broadcast()
			m.mu.Unlock()
			m.c.cfg.Logf("%v (again later)", err)
			continue
		}
		if err != nil {
			if m.err == nil {
				m.err = err
			}
			m.closing = true
			m.cond.Broadcast()
			m.mu.Unlock()
			m.signal()
			return
		}
		s.mat, s.matPrev = next, prev
		m.pending -= size
		for _, p := range recs {
			if n := len(m.reports); n > 0 && m.reports[n-1].s == s && m.reports[n-1].seg == p.seg {
				m.reports[n-1].n++
			} else {
				m.reports = append(m.reports, matReport{s: s, seg: p.seg, n: 1})
			}
			r := &m.reports[len(m.reports)-1]
			r.next, r.prev = next, prev
			if p.rec.Kind == journal.Blob {
				r.blobs = append(r.blobs, ledger.Hash(p.rec.Blob))
			}
		}
		clear(s.queue[:k]) // the records' bytes are not kept by the array
		s.queue = s.queue[k:]
		if len(s.queue) == 0 {
			s.queue = nil
		} else {
			m.enqueue(s)
		}
		m.cond.Broadcast()
		m.mu.Unlock()
		m.signal()
	}
}

func (m *materializer) signal() {
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// apply writes recs (the next records of s, in order) to its mirror in
// one durable commit, creating the mirror from its genesis. A record the
// mirror already holds is skipped once found equal (recovery replays
// records that may be in the mirror already). It returns the mirror's
// next seq and the hash its prev must be.
func (c *Collector) apply(ctx context.Context, s *source, recs []pendingRec) (uint64, ledger.Hash, error) {
	var genesis []byte
	if r := recs[0].rec; r.Kind == journal.Entry && r.Seq == 0 {
		genesis = r.Data
	}
	l, release, err := c.cache.acquire(s.id, genesis)
	if err != nil {
		return 0, ledger.Hash{}, fmt.Errorf("collector: source %s: %w", s.id, err)
	}
	defer release()
	next, prev, err := applyTo(ctx, l, recs)
	if err != nil {
		return 0, ledger.Hash{}, fmt.Errorf("collector: source %s: %w", s.id, err)
	}
	return next, prev, nil
}

// applyTo writes recs to l, consecutive entries in one AppendVerbatim,
// and syncs. l holds nothing queued (every apply ends synced), so an
// entry below its next seq is committed and can be read to compare.
func applyTo(ctx context.Context, l *ledger.Ledger, recs []pendingRec) (uint64, ledger.Hash, error) {
	have, _ := l.MirrorNext()
	var run []pendingRec
	flush := func() error {
		if len(run) == 0 {
			return nil
		}
		checked := true
		for _, p := range run {
			checked = checked && p.checked
		}
		var err error
		if checked {
			vs := make([]ledger.Verified, len(run))
			for i, p := range run {
				vs[i] = p.ver
			}
			_, err = l.AppendVerified(ctx, ledger.Async, vs...)
		} else {
			raws := make([][]byte, len(run))
			for i, p := range run {
				raws[i] = p.rec.Data
			}
			_, err = l.AppendVerbatim(ctx, ledger.Async, raws...)
		}
		run = run[:0]
		return err
	}
	at := have
	for _, p := range recs {
		r := p.rec
		switch {
		case r.Kind == journal.Blob:
			if err := flush(); err != nil {
				return 0, ledger.Hash{}, err
			}
			h := ledger.Hash(r.Blob)
			if err := l.PutBlobFrame(ctx, ledger.Async, h, r.Data); err != nil {
				return 0, ledger.Hash{}, fmt.Errorf("blob %s: %w", h, err)
			}
		case r.Seq < have:
			e, err := l.Get(r.Seq)
			if err != nil {
				return 0, ledger.Hash{}, fmt.Errorf("entry %d: %w", r.Seq, err)
			}
			if !bytes.Equal(e.Raw, r.Data) {
				return 0, ledger.Hash{}, fmt.Errorf("the journal's entry %d (hash %s) is not the one the mirror holds (hash %s)", r.Seq, ledger.Sum(r.Data), e.Hash())
			}
		case r.Seq == at:
			run = append(run, p)
			at++
		default:
			return 0, ledger.Hash{}, fmt.Errorf("the journal's entry %d where the mirror takes %d next", r.Seq, at)
		}
	}
	if err := flush(); err != nil {
		return 0, ledger.Hash{}, err
	}
	if err := l.Sync(ctx); err != nil {
		return 0, ledger.Hash{}, err
	}
	next, prev := l.MirrorNext()
	return next, prev, nil
}

// errJournalSkip marks a journal record recovery cannot apply (its
// mirror is gone): it is logged and its source asked to resend.
var errJournalSkip = errors.New("skipped")

// recoverBytes bounds what recovery holds before it writes to the
// mirrors.
const recoverBytes = 64 << 20

// recoverJournal writes to the mirrors what the journal holds beyond
// them (a crash came before they were materialized), then empties it:
// a torn tail is cut (never acknowledged), a record the mirror holds is
// skipped once found equal, one it cannot take stops the collector with
// the journal as it is. The checkpoints the journal held are checked
// again once the collector runs (recheck): their check may not have run.
func (c *Collector) recoverJournal() error {
	byID := map[string][]pendingRec{}
	var order []string
	held := int64(0)
	applied := 0
	flush := func() error {
		// Sources side by side, as the materializer writes them.
		var mu sync.Mutex
		var errs []error
		work := make(chan string)
		var wg sync.WaitGroup
		for range materializeWorkers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for id := range work {
					recs := byID[id]
					err := c.recoverSource(id, recs)
					mu.Lock()
					switch {
					case errors.Is(err, errJournalSkip):
					case err != nil:
						errs = append(errs, err)
					default:
						applied += len(recs)
					}
					mu.Unlock()
				}
			}()
		}
		for _, id := range order {
			work <- id
		}
		close(work)
		wg.Wait()
		byID, order, held = map[string][]pendingRec{}, nil, 0
		return errors.Join(errs...)
	}
	cut, err := c.jn.Replay(func(seg uint64, off int64, r journal.Record) error {
		if _, ok := byID[r.Source]; !ok {
			order = append(order, r.Source)
		}
		byID[r.Source] = append(byID[r.Source], pendingRec{rec: r, seg: seg})
		if r.Kind == journal.Entry && bytes.HasSuffix(r.Data, checkpointSuffix) {
			c.recheck[r.Source] = append(c.recheck[r.Source], r.Seq)
		}
		held += r.Size()
		if held >= recoverBytes {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		return fmt.Errorf("collector: journal: %w", err)
	}
	if cut > 0 {
		c.cfg.Logf("collector: journal: cut a torn tail of %d bytes (written, never acknowledged)", cut)
	}
	if applied > 0 {
		c.cfg.Logf("collector: journal: %d records checked against the mirrors", applied)
	}
	return nil
}

// recoverSource writes one source's records (recovery).
func (c *Collector) recoverSource(id string, recs []pendingRec) error {
	if recs[0].rec.Kind != journal.Entry || recs[0].rec.Seq != 0 {
		if _, err := os.Stat(SourcePath(c.cfg.Store, id)); errors.Is(err, fs.ErrNotExist) {
			c.cfg.Logf("collector: journal: %d records of source %s, whose mirror is not there: left (the source is asked to resend)", len(recs), id)
			return errJournalSkip
		}
	}
	for len(recs) > 0 {
		k := min(len(recs), materializeRecords)
		if _, _, err := c.apply(context.Background(), &source{id: id}, recs[:k]); err != nil {
			return err
		}
		recs = recs[k:]
	}
	return nil
}

// matHead is s's mirror's next seq and the hash of its head.
func (c *Collector) matHead(s *source) (uint64, ledger.Hash) {
	if c.mat == nil {
		return s.mat, s.matPrev
	}
	c.mat.mu.Lock()
	defer c.mat.mu.Unlock()
	return s.mat, s.matPrev
}
