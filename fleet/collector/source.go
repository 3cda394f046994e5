package collector

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/opx-dev/opx/fleet"
	"github.com/opx-dev/opx/fleet/collector/journal"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/tlog"
)

// source is what the collector knows of one source ledger.
type source struct {
	id string
	// has: its genesis was verified and journaled (false until it
	// arrives); next is the seq verified next, prev the hash its prev
	// must be (what the journal holds, the mirror following).
	has  bool
	next uint64
	prev ledger.Hash

	// Guarded by the materializer's mu (materialize.go): the records
	// journaled and not yet in the mirror, whether the source is in the
	// materializer's turn, and the mirror's own next seq (0: no mirror
	// written yet) and the hash its prev must be.
	queue   []pendingRec
	queued  bool // in the materializer's turn (dirty)
	ripe    bool // in its list of sources with matRipe records waiting
	busy    bool // a worker writes its mirror
	mat     uint64
	matPrev ledger.Hash

	// jblobs are the blobs journaled that the mirror may not hold yet;
	// checks the checkpoints verified whose tree waits for the mirror.
	jblobs map[ledger.Hash]bool
	checks []pendingCheckpoint
	trees  *mirrorTrees // the mirror's trees, for add-checkpoint

	hello    *fleet.Hello
	claims   []claim // heads hellos named beyond the mirror's
	lastSeen time.Time
	stalled  bool

	held     map[uint64]*heldEntry // reorder buffer: entries after next
	parts    map[string]*assembly  // entries and blobs arriving in parts
	blobs    []heldBlob            // blobs that came before the genesis
	heldSize int64
	brokenAt uint64 // the seq whose prev broke the chain (0: none)
	forked   bool   // a hello named a head the mirror holds with another hash

	keys       []tlog.Verifier // the pinned key (or the allow-list)
	pinnedSeq  uint64
	checkpoint uint64 // size of the last checkpoint verified
	// lastCheckpoint is the latest checkpoint entry the mirror held on
	// open, verified or not (catchUpCosign checks it).
	lastCheckpoint uint64
	cosigned       uint64 // size of the last checkpoint cosigned
	cosigNote      []byte // its recorded note
	published      bool   // cosigNote is on the cosignature stream
	publishing     bool   // one of its cosignatures is in flight (cosig_publish.go)
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
	// touched is when msgs were last reported in progress (held_alive.go).
	touched time.Time
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
	// touched is when msgs were last reported in progress (held_alive.go).
	touched time.Time
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
	// touched is when msgs were last reported in progress (held_alive.go).
	touched time.Time
}

func (c *Collector) source(id string) *source {
	s := c.sources[id]
	if s == nil {
		s = &source{id: id, held: map[uint64]*heldEntry{}, parts: map[string]*assembly{}, jblobs: map[ledger.Hash]bool{}}
		s.trees = &mirrorTrees{cache: c.cache, id: id}
		if keys := c.allow[id]; len(keys) > 0 {
			s.keys = keys
		}
		c.sources[id] = s
	}
	return s
}

// oldestHeld is when the oldest entry or part s holds came (now: none).
func (s *source) oldestHeld(now time.Time) time.Time {
	t := now
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
	order   []*source // the sources touched, in the order they were
	checks  []pendingCheckpoint
	// recs are the records the batch verified, for the journal, each of
	// the source recSrc says.
	recs   []journal.Record
	recSrc []*source
	// recVer are the entries of recs as checked (the zero Verified for
	// the others): the mirror takes them without parsing them again.
	recVer []ledger.Verified
	err    error // a store that failed: the batch is not acknowledged
	// per counts the messages handled per source id, size their bytes
	// (fair.go).
	per  map[string]int
	size int
}

// journal adds a verified record of s to the batch.
func (b *batch) journal(s *source, r journal.Record) { b.journalChecked(s, r, ledger.Verified{}) }

// journalChecked adds a verified entry of s to the batch, as v checked
// it.
func (b *batch) journalChecked(s *source, r journal.Record, v ledger.Verified) {
	r.Source = s.id
	b.recs = append(b.recs, r)
	b.recSrc = append(b.recSrc, s)
	b.recVer = append(b.recVer, v)
	if !b.touched[s] {
		b.touched[s] = true
		b.order = append(b.order, s)
	}
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
	if msg.Kind == fleet.KindEntry && s.has && msg.Seq < s.next {
		// A resend of an entry the collector holds (in its mirror or
		// its journal): each part is compared as it comes (an entry in
		// parts is never a checkpoint). One that differs proves other
		// bytes for seq; equal ones are dropped, so a rewrite that keeps
		// some parts is still seen.
		if raw, err := c.entryAt(s, msg.Seq); err == nil {
			e := ledger.Entry{Raw: raw}
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
				msg.Seq, msg.Part, msg.Parts, msg.Size, len(e.Raw), ledger.Sum(e.Raw), why))
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
	for s.has {
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
	if !s.has {
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
	if s.jblobs[h] || c.mirrorHasBlob(s, h) {
		return
	}
	if err := ledger.CheckBlobFrame(h, frame); err != nil {
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
	s.jblobs[h] = true
	b.journal(s, journal.Record{Kind: journal.Blob, Seq: s.next, Blob: h, Data: frame})
}

// takeEntry takes the entry seq of s.
//
// conflict: it came under a ConflictMsgID (its shipper found other bytes
// stored under its EntryMsgID), so other bytes held for seq are another
// history under this ledger id: a fork.
func (c *Collector) takeEntry(ctx context.Context, b *batch, s *source, seq uint64, raw []byte, msgs []jetstream.Msg, conflict bool) {
	switch {
	case !s.has && seq == 0:
		c.createMirror(ctx, b, s, raw, msgs)
		return
	case s.has && seq < s.next:
		c.resent(ctx, b, s, seq, raw, conflict)
		b.acks = append(b.acks, msgs...)
		return
	case !s.has || seq > s.next:
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
	v, err := ledger.CheckVerified(seq, s.prev, raw)
	if err != nil {
		c.refused(b, s, seq, raw, msgs, err)
		return
	}
	b.journalChecked(s, journal.Record{Kind: journal.Entry, Seq: seq, Data: raw}, v)
	s.next, s.prev = seq+1, v.Hash()
	s.brokenAt = 0
	s.progressAt = time.Now()
	c.inspect(b, s, seq, raw)
}

func (c *Collector) createMirror(ctx context.Context, b *batch, s *source, raw []byte, msgs []jetstream.Msg) {
	b.acks = append(b.acks, msgs...)
	e, err := ledger.ParseEntry(raw)
	if err == nil && !bytes.Contains(e.Data, []byte(`"ledger_id":"`+s.id+`"`)) {
		err = fmt.Errorf("the genesis names another ledger than its subject (%s)", s.id)
	}
	if err != nil {
		c.alertMsg(b, s.id, event.AlertMalformed, 0, streamSeq(msgs), "genesis: "+err.Error())
		return
	}
	id, err := ledger.CheckMirrorGenesis(raw)
	var ie *ledger.IntegrityError
	switch {
	case errors.As(err, &ie):
		c.alertMsg(b, s.id, event.AlertMalformed, 0, streamSeq(msgs), "genesis: "+ie.Error())
		return
	case err != nil:
		b.err = errors.Join(b.err, fmt.Errorf("collector: source %s: %w", s.id, err))
		return
	case id != s.id:
		c.alert(b, s.id, event.AlertMalformed, 0, "the genesis names ledger "+id)
		return
	}
	// The mirror is created when the genesis is materialized.
	b.journal(s, journal.Record{Kind: journal.Entry, Seq: 0, Data: raw})
	s.has = true
	s.next, s.prev = 1, ledger.Sum(raw)
	c.trustSource(s) // the origins' mirror, for add-checkpoint
	s.progressAt = time.Now()
	for _, hb := range s.blobs {
		s.heldSize -= int64(len(hb.frame))
		c.held -= int64(len(hb.frame))
		c.takeBlob(ctx, b, s, hb.h, hb.frame, hb.msgs)
	}
	s.blobs = nil
	c.cfg.Logf("collector: new source %s", s.id)
}

// resent checks an entry the mirror already holds: the same bytes are a
// harmless duplicate (a redelivery, a shipper's resend); other bytes are
// a rewrite, or a fork when they are a checkpoint the source's key
// signed.
func (c *Collector) resent(ctx context.Context, b *batch, s *source, seq uint64, raw []byte, conflict bool) {
	held, err := c.entryAt(s, seq)
	e := ledger.Entry{Raw: held}
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

// commit makes the batch durable (the journal, synced once for every
// source the batch touched, then the collector's ledger), acknowledges
// its messages and hands what it verified to the materializer; the
// checkpoints that need the mirrors' trees wait for the mirrors
// (materialized).
func (c *Collector) commit(ctx context.Context, b *batch) error {
	if b.err != nil {
		return b.err
	}
	if len(b.recs) > 0 {
		seg, err := c.jn.Append(b.recs)
		if err == nil {
			err = c.jn.Sync()
			c.syncedAt = time.Now()
		}
		if err != nil {
			return fmt.Errorf("collector: %w", err)
		}
		c.mat.push(seg, b.recs, b.recSrc, b.recVer)
	}
	if c.cfg.Stored != nil {
		for _, s := range b.order {
			c.cfg.Stored(s.id, s.next-1)
		}
	}
	// The checkpoints the batch verified whose tree the mirror holds
	// already (an entry the mirror had, resent) are checked now; the
	// others once their mirror moves (materialized).
	var checked map[*source]bool
	for _, p := range b.checks {
		p.s.checks = append(p.s.checks, p)
		if checked == nil {
			checked = map[*source]bool{}
		}
		checked[p.s] = true
	}
	cosigned := c.checkMaterialized(b, checked)
	if err := c.own.Sync(ctx); err != nil {
		return fmt.Errorf("collector: own ledger: %w", err)
	}
	for _, m := range b.acks {
		if err := m.Ack(); err != nil {
			c.cfg.Logf("collector: ack: %v", err)
		}
	}
	if cosigned {
		c.publishPending(ctx)
	}
	if len(b.seen) > 0 || len(b.touched) > 0 {
		c.dirty = true
		c.writeStatus(false)
	}
	return nil
}

// materialized takes what the materializer wrote since the last call:
// the checks that waited for the mirrors run, the status shows the
// mirrors' heads, and the journal forgets the records (once what the
// checks recorded is durable).
func (c *Collector) materialized(ctx context.Context) error {
	reports, err := c.mat.take()
	if err != nil {
		return err
	}
	if len(reports) == 0 {
		return nil
	}
	b := c.newBatch()
	moved := map[*source]bool{}
	for _, r := range reports {
		for _, h := range r.blobs {
			delete(r.s.jblobs, h)
		}
		moved[r.s] = true
	}
	for s := range moved {
		if c.cfg.Materialized != nil {
			c.cfg.Materialized(s.id, c.mat.next(s)-1)
		}
		c.serve(s)
	}
	cosigned := c.checkMaterialized(b, moved)
	if err := c.commit(ctx, b); err != nil {
		return err
	}
	for _, r := range reports {
		c.jn.Done(r.seg, r.n)
	}
	if cosigned {
		c.publishPending(ctx)
	}
	c.dirty = true
	return nil
}

// checkMaterialized runs, for each source of srcs, what waited for its
// mirror: add-checkpoint's cosignatures compared with it, and the
// checkpoints verified whose size it holds now (checkTree, then the
// latest is cosigned). It reports whether it cosigned.
func (c *Collector) checkMaterialized(b *batch, srcs map[*source]bool) bool {
	cosigned := false
	for s := range srcs {
		mat := c.mat.next(s)
		if mat == 0 {
			continue
		}
		c.checkWitnessed(b, s)
		var latest *pendingCheckpoint
		keep := s.checks[:0]
		for i := range s.checks {
			p := s.checks[i]
			if p.seq >= mat {
				keep = append(keep, p)
				continue
			}
			if c.checkTree(b, p) && p.seq > s.cosigned && (latest == nil || p.seq > latest.seq) {
				latest = &p
			}
		}
		clear(s.checks[len(keep):])
		s.checks = keep
		if latest != nil {
			c.cosign(b, s, *latest)
			cosigned = true
		}
	}
	return cosigned
}

// entryAt is the entry seq (below s.next) the collector holds for s:
// from the materializer's queue while it waits there, else from the
// mirror.
func (c *Collector) entryAt(s *source, seq uint64) ([]byte, error) {
	if raw, ok := c.mat.queued(s, seq); ok {
		return raw, nil
	}
	l, release, err := c.cache.acquire(s.id, nil)
	if err != nil {
		return nil, err
	}
	defer release()
	e, err := l.Get(seq)
	if err != nil {
		return nil, err
	}
	return e.Raw, nil
}

// mirrorHasBlob reports whether s's mirror holds blob h (committed).
func (c *Collector) mirrorHasBlob(s *source, h ledger.Hash) bool {
	if c.mat.next(s) == 0 {
		return false
	}
	l, release, err := c.cache.acquire(s.id, nil)
	if err != nil {
		return false
	}
	defer release()
	ok, _ := l.HasBlob(h)
	return ok
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
