package collector

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/opx-dev/opx/fleet"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/tlog"
)

// source is what the collector knows of one source ledger.
type source struct {
	id   string
	m    *ledger.Ledger // nil until its genesis arrives
	next uint64         // the seq the mirror takes next
	prev ledger.Hash

	hello    *fleet.Hello
	claims   []claim // heads hellos named beyond the mirror's
	lastSeen time.Time
	stalled  bool

	held     map[uint64]*heldEntry // reorder buffer: entries after next
	parts    map[string]*assembly  // entries and blobs arriving in parts
	blobs    []heldBlob            // blobs that came before the genesis
	heldSize int64
	brokenAt uint64  // the seq whose prev broke the chain (0: none)
	forked   bool    // a hello named a head the mirror holds with another hash
	served   *served // its LedgerService for review (serve.go)

	keys       []tlog.Verifier // the pinned key (or the allow-list)
	pinnedSeq  uint64
	checkpoint uint64 // size of the last checkpoint verified
	// lastCheckpoint is the latest checkpoint entry the mirror held on
	// open, verified or not (catchUpCosign checks it).
	lastCheckpoint uint64
	cosigned       uint64 // size of the last checkpoint cosigned
	cosigNote      []byte // its recorded note
	published      bool   // cosigNote is on the cosignature stream
	dropped        uint64 // entries dropped after a broken chain or a gap

	// progressAt is when the mirror last moved (or the source was first
	// heard of): a source behind its hello's head that long is asked to
	// resend (resend.go).
	progressAt time.Time
	resendAt   time.Time // the last resend request (at most one per fleet.ResendEvery)
	resendFrom uint64    // and where it asked to start
	resends    uint64    // requests published
	// aheadShown is the WitnessedAhead the status last showed.
	aheadShown uint64
}

type claim struct {
	seq  uint64
	hash string
	boot string
}

type heldEntry struct {
	raw      []byte
	msgs     []jetstream.Msg
	at       time.Time
	conflict bool // came under a ConflictMsgID
}

// isConflict reports whether msg is an entry published under its
// ConflictMsgID (fleet/wire.go): "<EntryMsgID>#<hash16>".
func isConflict(msg *fleet.Message) bool {
	if msg.Kind != fleet.KindEntry {
		return false
	}
	rest, ok := strings.CutPrefix(msg.MsgID, fleet.EntryMsgID(msg.LedgerID, msg.Seq)+"#")
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		rest = rest[:i] // an earlier part's: "<ConflictMsgID>/<i>"
	}
	return ok && len(rest) == 16
}

type heldBlob struct {
	h     ledger.Hash
	frame []byte
	msgs  []jetstream.Msg
	at    time.Time
}

// dropOldBlobs gives up on the blobs that came before a genesis that did
// not follow within GapAfter (acknowledged: a resend from the genesis
// brings them again).
func (c *Collector) dropOldBlobs(b *batch, s *source, now time.Time) {
	if len(s.blobs) == 0 || !s.blobs[0].at.Before(now.Add(-GapAfter)) {
		return
	}
	for _, hb := range s.blobs {
		b.acks = append(b.acks, hb.msgs...)
		s.heldSize -= int64(len(hb.frame))
		c.held -= int64(len(hb.frame))
	}
	s.blobs = nil
	c.askResend(s, "blobs came, no genesis")
}

// tooMany refuses a message of a source beyond Config.MaxSources: one
// alert per sourcesAlertEvery, the rest counted.
func (c *Collector) tooMany(b *batch, id string) {
	c.refusedMsgs++
	if now := time.Now(); now.Sub(c.tooManyAt) >= tooManyEvery {
		c.tooManyAt = now
		c.alertMsg(b, id, event.AlertTooMany, 0, c.refusedMsgs, fmt.Sprintf("a source beyond the %d this collector takes (max_sources): its messages are dropped (%d dropped so far, every source beyond)",
			c.cfg.MaxSources, c.refusedMsgs))
	}
	c.dirty = true
}

// assembly gathers the parts of one entry or blob.
type assembly struct {
	kind  fleet.Kind
	seq   uint64
	blob  ledger.Hash
	size  int64
	parts [][]byte
	got   int
	msgs  []jetstream.Msg
	at    time.Time
	// conflict: a part came under a ConflictMsgID.
	conflict bool
}

func (c *Collector) source(id string) *source {
	s := c.sources[id]
	if s == nil {
		s = &source{id: id, held: map[uint64]*heldEntry{}, parts: map[string]*assembly{}}
		if keys := c.allow[id]; len(keys) > 0 {
			s.keys = keys
		}
		c.sources[id] = s
	}
	return s
}

func (s *source) oldestHeld() time.Time {
	t := time.Now()
	for _, h := range s.held {
		if h.at.Before(t) {
			t = h.at
		}
	}
	for _, a := range s.parts {
		if a.at.Before(t) {
			t = a.at
		}
	}
	return t
}

// batch is the messages handled between two commits.
type batch struct {
	seen    []jetstream.Msg // every message handled (for the count)
	acks    []jetstream.Msg // acknowledged once the batch commits
	touched map[*source]bool
	checks  []pendingCheckpoint
	err     error // a store that failed: the batch is not acknowledged
}

type pendingCheckpoint struct {
	s    *source
	seq  uint64
	cp   tlog.Checkpoint
	key  tlog.Verifier
	note []byte
}

func (c *Collector) newBatch() *batch { return &batch{touched: map[*source]bool{}} }

// handle takes one message: whatever it is, it is either acknowledged
// with the batch or held (reorder buffer, parts) until what it carries
// is committed or given up.
func (c *Collector) handle(ctx context.Context, b *batch, jm jetstream.Msg) {
	b.seen = append(b.seen, jm)
	nm := &nats.Msg{Subject: jm.Subject(), Header: jm.Headers(), Data: jm.Data()}
	msg, err := fleet.Parse(c.cfg.Prefix, nm)
	if err != nil {
		id := sourceOfSubject(c.cfg.Prefix, jm.Subject())
		c.alertMsg(b, id, event.AlertMalformed, headerSeq(nm), streamSeq([]jetstream.Msg{jm}), err.Error())
		b.acks = append(b.acks, jm)
		return
	}
	s := c.sources[msg.LedgerID]
	if s == nil && len(c.sources) >= c.cfg.MaxSources {
		c.tooMany(b, msg.LedgerID)
		b.acks = append(b.acks, jm)
		return
	}
	s = c.source(msg.LedgerID)
	s.lastSeen, s.stalled = time.Now(), false
	if s.progressAt.IsZero() {
		s.progressAt = s.lastSeen
	}
	switch msg.Kind {
	case fleet.KindHello:
		c.takeHello(b, s, msg.Hello)
		b.acks = append(b.acks, jm)
	case fleet.KindEntry, fleet.KindBlob:
		if msg.Parts == 1 {
			c.whole(ctx, b, s, msg.Kind, msg.Seq, msg.Blob, msg.Data, []jetstream.Msg{jm}, isConflict(msg))
			return
		}
		c.part(ctx, b, s, msg, jm)
	}
}

// part adds one part of an entry or blob; the whole is taken once every
// part is there.
func (c *Collector) part(ctx context.Context, b *batch, s *source, msg *fleet.Message, jm jetstream.Msg) {
	key := fmt.Sprintf("e%d", msg.Seq)
	if msg.Kind == fleet.KindBlob {
		key = "b" + msg.Blob.String()
	}
	if msg.Kind == fleet.KindEntry && s.m != nil && msg.Seq < s.next {
		// A resend of an entry the mirror holds: each part is compared
		// as it comes (an entry in parts is never a checkpoint). One
		// that differs proves other bytes for seq; equal ones are
		// dropped, so a rewrite that keeps some parts is still seen.
		if b.touched[s] {
			if err := s.m.Sync(ctx); err != nil {
				b.err = errors.Join(b.err, fmt.Errorf("collector: source %s: %w", s.id, err))
				return
			}
		}
		if e, err := s.m.Get(msg.Seq); err == nil {
			b.acks = append(b.acks, jm)
			off := msg.Part * fleet.MaxChunk
			if int64(len(e.Raw)) == msg.Size && off+len(msg.Data) <= len(e.Raw) && bytes.Equal(e.Raw[off:off+len(msg.Data)], msg.Data) {
				return
			}
			kind, why := event.AlertRewrite, "sent again with other bytes"
			if isConflict(msg) {
				kind, why = event.AlertFork, "published as conflicting with the stream's: another history under this ledger id"
			}
			c.alert(b, s.id, kind, msg.Seq, fmt.Sprintf("entry %d (part %d/%d of %d bytes; the mirror holds %d bytes, hash %s) %s",
				msg.Seq, msg.Part, msg.Parts, msg.Size, len(e.Raw), e.Hash(), why))
			return
		}
	}
	a := s.parts[key]
	if a != nil && (a.size != msg.Size || len(a.parts) != msg.Parts) {
		c.alert(b, s.id, event.AlertMalformed, msg.Seq, fmt.Sprintf("%s part %d/%d of size %d, earlier parts said %d/%d of size %d",
			msg.Kind, msg.Part, msg.Parts, msg.Size, a.got, len(a.parts), a.size))
		b.acks = append(b.acks, jm)
		return
	}
	if a == nil {
		bound := int64(ReorderBytes)
		if msg.Kind == fleet.KindBlob {
			bound = MaxCollectedBlob // a blob, alone, may be larger than a reorder buffer
		}
		if msg.Kind == fleet.KindBlob && msg.Size > MaxCollectedBlob {
			// Nothing wrong with it: this collector does not take blobs
			// that large (the mirror lacks it; its verify says so).
			if msg.Part == 0 {
				c.alertMsg(b, s.id, event.AlertTooLarge, s.next, streamSeq([]jetstream.Msg{jm}), fmt.Sprintf("blob %s: a stored frame of %d bytes is too large for this collector (at most %d); the mirror lacks it",
					msg.Blob, msg.Size, int64(MaxCollectedBlob)))
			}
			b.acks = append(b.acks, jm)
			return
		}
		if s.heldSize+msg.Size > bound || c.held+msg.Size > TotalHeldBytes {
			kind := event.AlertGap
			if msg.Kind == fleet.KindBlob {
				kind = event.AlertTooLarge
			}
			c.alert(b, s.id, kind, msg.Seq, fmt.Sprintf("%s of %d bytes in %d parts: more than this collector holds for a source now (%d bytes held, %d for every source)",
				msg.Kind, msg.Size, msg.Parts, s.heldSize, c.held))
			b.acks = append(b.acks, jm)
			return
		}
		a = &assembly{kind: msg.Kind, seq: msg.Seq, blob: msg.Blob, size: msg.Size, parts: make([][]byte, msg.Parts), at: time.Now()}
		s.parts[key] = a
		s.heldSize += msg.Size
		c.held += msg.Size
	}
	a.msgs = append(a.msgs, jm)
	a.conflict = a.conflict || isConflict(msg)
	if a.parts[msg.Part] == nil {
		a.parts[msg.Part] = msg.Data
		a.got++
	}
	if a.got < len(a.parts) {
		return
	}
	delete(s.parts, key)
	s.heldSize -= a.size
	c.held -= a.size
	whole := bytes.Join(a.parts, nil)
	c.whole(ctx, b, s, a.kind, a.seq, a.blob, whole, a.msgs, a.conflict)
}

// whole takes a whole entry or blob.
func (c *Collector) whole(ctx context.Context, b *batch, s *source, kind fleet.Kind, seq uint64, h ledger.Hash, data []byte, msgs []jetstream.Msg, conflict bool) {
	if kind == fleet.KindBlob {
		c.takeBlob(ctx, b, s, h, data, msgs)
		return
	}
	c.takeEntry(ctx, b, s, seq, data, msgs, conflict)
	// Entries that waited for this one follow it.
	for s.m != nil {
		h, ok := s.held[s.next]
		if !ok {
			break
		}
		delete(s.held, s.next)
		c.heldEntries--
		s.heldSize -= int64(len(h.raw))
		c.held -= int64(len(h.raw))
		c.takeEntry(ctx, b, s, s.next, h.raw, h.msgs, false)
	}
}

func (c *Collector) takeBlob(ctx context.Context, b *batch, s *source, h ledger.Hash, frame []byte, msgs []jetstream.Msg) {
	if s.m == nil {
		for i := range s.blobs {
			if s.blobs[i].h == h && bytes.Equal(s.blobs[i].frame, frame) {
				s.blobs[i].msgs = append(s.blobs[i].msgs, msgs...) // a redelivery: held once
				return
			}
		}
		if s.heldSize+int64(len(frame)) > ReorderBytes || c.held+int64(len(frame)) > TotalHeldBytes {
			c.alert(b, s.id, event.AlertTooLarge, 0, fmt.Sprintf("blob %s before the source's genesis: more than this collector holds for a source without a mirror", h))
			b.acks = append(b.acks, msgs...)
			return
		}
		s.blobs = append(s.blobs, heldBlob{h: h, frame: bytes.Clone(frame), msgs: msgs, at: time.Now()})
		s.heldSize += int64(len(frame))
		c.held += int64(len(frame))
		return
	}
	b.acks = append(b.acks, msgs...)
	if ok, _ := s.m.HasBlob(h); ok {
		return
	}
	if err := s.m.PutBlobFrame(ctx, ledger.Async, h, frame); err != nil {
		var ie *ledger.IntegrityError
		if errors.As(err, &ie) {
			c.alertMsg(b, s.id, event.AlertBadBlob, s.next, streamSeq(msgs), ie.Detail)
			// The real blob may have been kept away by a forged part
			// under its message id (the duplicate window): a resend
			// from the entry that names it (the next: blobs come just
			// before it) brings it under fresh ids.
			c.askResend(s, "bad blob "+h.String())
			return
		}
		b.err = errors.Join(b.err, fmt.Errorf("collector: source %s: blob %s: %w", s.id, h, err))
		return
	}
	b.touched[s] = true
}

// takeEntry takes the entry seq of s.
//
// conflict: it came under a ConflictMsgID (its shipper found other bytes
// stored under its EntryMsgID), so other bytes held for seq are another
// history under this ledger id: a fork.
func (c *Collector) takeEntry(ctx context.Context, b *batch, s *source, seq uint64, raw []byte, msgs []jetstream.Msg, conflict bool) {
	switch {
	case s.m == nil && seq == 0:
		c.createMirror(ctx, b, s, raw, msgs)
		return
	case s.m != nil && seq < s.next:
		c.resent(ctx, b, s, seq, raw, conflict)
		b.acks = append(b.acks, msgs...)
		return
	case s.m == nil || seq > s.next:
		if s.brokenAt != 0 && seq > s.brokenAt {
			s.dropped++ // chained onto the entry that broke the chain
			b.acks = append(b.acks, msgs...)
			return
		}
		if h, ok := s.held[seq]; ok {
			if bytes.Equal(h.raw, raw) {
				h.msgs = append(h.msgs, msgs...)
			} else if conflict || h.conflict {
				c.alert(b, s.id, event.AlertFork, seq, fmt.Sprintf("two different entries for seq %d, one published as conflicting with the stream's: another history under this ledger id", seq))
				b.acks = append(b.acks, msgs...)
			} else {
				c.alert(b, s.id, event.AlertRewrite, seq, "two different entries sent for this seq before it could be taken")
				b.acks = append(b.acks, msgs...)
			}
			return
		}
		if len(s.held) >= ReorderEntries || s.heldSize+int64(len(raw)) > ReorderBytes ||
			c.held+int64(len(raw)) > TotalHeldBytes || c.heldEntries >= TotalHeldEntries {
			c.gap(b, s, fmt.Sprintf("entry %d came while %d entries (%d bytes) wait for it", seq, len(s.held), s.heldSize))
			s.dropped++
			b.acks = append(b.acks, msgs...)
			return
		}
		s.held[seq] = &heldEntry{raw: bytes.Clone(raw), msgs: msgs, at: time.Now(), conflict: conflict}
		c.heldEntries++
		s.heldSize += int64(len(raw))
		c.held += int64(len(raw))
		return
	}
	b.acks = append(b.acks, msgs...)
	if _, err := s.m.AppendVerbatim(ctx, ledger.Async, raw); err != nil {
		c.refused(b, s, seq, raw, msgs, err)
		return
	}
	s.next, s.prev = seq+1, ledger.Sum(raw)
	s.brokenAt = 0
	s.progressAt = time.Now()
	b.touched[s] = true
	c.inspect(b, s, seq, raw)
}

func (c *Collector) createMirror(ctx context.Context, b *batch, s *source, raw []byte, msgs []jetstream.Msg) {
	b.acks = append(b.acks, msgs...)
	path := SourcePath(c.cfg.Store, s.id)
	e, err := ledger.ParseEntry(raw)
	if err == nil && !bytes.Contains(e.Data, []byte(`"ledger_id":"`+s.id+`"`)) {
		err = fmt.Errorf("the genesis names another ledger than its subject (%s)", s.id)
	}
	if err != nil {
		c.alertMsg(b, s.id, event.AlertMalformed, 0, streamSeq(msgs), "genesis: "+err.Error())
		return
	}
	m, err := ledger.CreateMirror(path, raw, c.mirrorOptions())
	var ie *ledger.IntegrityError
	switch {
	case errors.As(err, &ie):
		c.alertMsg(b, s.id, event.AlertMalformed, 0, streamSeq(msgs), "genesis: "+ie.Error())
		return
	case err != nil:
		b.err = errors.Join(b.err, fmt.Errorf("collector: source %s: %w", s.id, err))
		return
	}
	if m.ID() != s.id {
		m.Close()
		os.RemoveAll(filepath.Dir(path))
		c.alert(b, s.id, event.AlertMalformed, 0, "the genesis names ledger "+m.ID())
		return
	}
	s.m = m
	s.next, s.prev = 1, ledger.Sum(raw)
	c.trustSource(s) // the origins' mirror, for add-checkpoint
	s.progressAt = time.Now()
	b.touched[s] = true
	for _, hb := range s.blobs {
		s.heldSize -= int64(len(hb.frame))
		c.held -= int64(len(hb.frame))
		c.takeBlob(ctx, b, s, hb.h, hb.frame, hb.msgs)
	}
	s.blobs = nil
	c.serve(s)
	c.cfg.Logf("collector: new source %s", s.id)
}

// resent checks an entry the mirror already holds: the same bytes are a
// harmless duplicate (a redelivery, a shipper's resend); other bytes are
// a rewrite, or a fork when they are a checkpoint the source's key
// signed.
func (c *Collector) resent(ctx context.Context, b *batch, s *source, seq uint64, raw []byte, conflict bool) {
	if b.touched[s] {
		if err := s.m.Sync(ctx); err != nil {
			c.cfg.Logf("collector: source %s: %v", s.id, err)
			return
		}
	}
	e, err := s.m.Get(seq)
	if err != nil {
		c.cfg.Logf("collector: source %s: entry %d: %v", s.id, seq, err)
		return
	}
	if bytes.Equal(e.Raw, raw) {
		return
	}
	if cp, ok := c.signedCheckpoint(s, seq, raw); ok {
		c.alert(b, s.id, event.AlertFork, seq, fmt.Sprintf("a second signed checkpoint for size %d (root %s), another history under this ledger id", seq, cp.RootString()))
		return
	}
	if conflict {
		c.alert(b, s.id, event.AlertFork, seq, fmt.Sprintf("entry %d published as conflicting with the stream's (hash %s, the mirror holds %s): another history under this ledger id", seq, ledger.Sum(raw), ledger.Sum(e.Raw)))
		return
	}
	c.alert(b, s.id, event.AlertRewrite, seq, fmt.Sprintf("entry %d sent again with other bytes (hash %s, held %s)", seq, ledger.Sum(raw), ledger.Sum(e.Raw)))
}

// refused turns a mirror's refusal of the next entry into an alert.
func (c *Collector) refused(b *batch, s *source, seq uint64, raw []byte, msgs []jetstream.Msg, err error) {
	var ie *ledger.IntegrityError
	if !errors.As(err, &ie) {
		// The mirror failed (a broken writer): nothing of the batch is
		// acknowledged, the collector stops and says why.
		b.err = errors.Join(b.err, fmt.Errorf("collector: source %s: entry %d: %w", s.id, seq, err))
		return
	}
	switch ie.Kind {
	case ledger.KindHashMismatch:
		s.brokenAt = seq
		if _, ok := c.signedCheckpoint(s, seq, raw); ok || s.forked {
			c.alert(b, s.id, event.AlertFork, seq, "entry "+fmt.Sprint(seq)+" chains onto another history than the one shipped: "+ie.Detail)
			return
		}
		c.alert(b, s.id, event.AlertBrokenChain, seq, fmt.Sprintf("%s (prev %s, the entry before hashes to %s)", ie.Detail, ie.Found, ie.Expected))
	default:
		c.alertMsg(b, s.id, event.AlertMalformed, seq, streamSeq(msgs), "entry: "+ie.Detail)
	}
}

// gap gives up on the entries a source's reorder buffer waits for.
func (c *Collector) gap(b *batch, s *source, why string) {
	first := ^uint64(0)
	for seq, h := range s.held {
		first = min(first, seq)
		b.acks = append(b.acks, h.msgs...)
		s.dropped++
	}
	for _, a := range s.parts {
		b.acks = append(b.acks, a.msgs...)
	}
	kept := int64(0) // blobs that came before the genesis stay
	for _, hb := range s.blobs {
		kept += int64(len(hb.frame))
	}
	c.held -= s.heldSize - kept
	s.heldSize = kept
	c.heldEntries -= len(s.held)
	s.held = map[uint64]*heldEntry{}
	s.parts = map[string]*assembly{}
	detail := fmt.Sprintf("entries from %d missing: %s", s.next, why)
	if first != ^uint64(0) {
		detail = fmt.Sprintf("entries %d..%d missing: %s", s.next, first-1, why)
	}
	c.alert(b, s.id, event.AlertGap, s.next, detail)
	// What was dropped comes again once the source resends it.
	c.askResend(s, "gap: "+why)
}

// commit makes the batch durable (mirrors, then the collector's ledger),
// checks the checkpoints that needed the mirrors' trees, cosigns and
// publishes, and acknowledges the messages.
func (c *Collector) commit(ctx context.Context, b *batch) error {
	if b.err != nil {
		return b.err
	}
	// The mirrors' commits (an fsync each) run side by side.
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for s := range b.touched {
		if s.m == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.m.Sync(ctx); err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("collector: source %s: %w", s.id, err))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if c.cfg.Stored != nil {
		for s := range b.touched {
			if s.m != nil {
				c.cfg.Stored(s.id, s.next-1)
			}
		}
	}
	for s := range b.touched {
		c.checkWitnessed(b, s)
	}
	cosign := map[*source]pendingCheckpoint{}
	for _, p := range b.checks {
		if c.checkTree(b, p) && p.seq > p.s.cosigned {
			cosign[p.s] = p // the latest of each source
		}
	}
	for s, p := range cosign {
		c.cosign(b, s, p)
	}
	if err := c.own.Sync(ctx); err != nil {
		return fmt.Errorf("collector: own ledger: %w", err)
	}
	for _, m := range b.acks {
		if err := m.Ack(); err != nil {
			c.cfg.Logf("collector: ack: %v", err)
		}
	}
	if len(cosign) > 0 {
		c.publishPending(ctx)
	}
	if len(b.seen) > 0 || len(b.touched) > 0 {
		c.dirty = true
		c.writeStatus(false)
	}
	return nil
}

func sourceOfSubject(prefix, subject string) string {
	id := subject[min(len(subject), len(prefix)+len(".ledger.")):]
	if fleet.CheckLedgerID(id) != nil {
		return "-"
	}
	return id
}

func headerSeq(m *nats.Msg) uint64 {
	var seq uint64
	v := m.Header.Get(fleet.HdrSeq)
	if len(v) > 20 {
		return 0
	}
	if _, err := fmt.Sscan(v, &seq); err != nil {
		return 0
	}
	return seq
}

// streamSeq is the stream seq of the first of msgs (0 when unknown).
func streamSeq(msgs []jetstream.Msg) uint64 {
	if len(msgs) == 0 {
		return 0
	}
	md, err := msgs[0].Metadata()
	if err != nil {
		return 0
	}
	return md.Sequence.Stream
}
