package collector

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/opx-dev/opx/fleet"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/tlog"
)

// maxClaims bounds the hello heads kept per source.
const maxClaims = 8

var (
	checkpointSuffix = []byte(`"type":"` + ledger.TypeCheckpoint + `"}`)
	keySuffix        = []byte(`"type":"` + event.TypeKey + `"}`)
)

// takeHello checks what a source says of itself against what it
// shipped: a head behind the mirror's is a rewind, a head the mirror
// holds with another hash a fork; a head beyond is checked when the
// mirror gets there.
func (c *Collector) takeHello(b *batch, s *source, h *fleet.Hello) {
	h = clipHello(h)
	s.hello = h
	cl := claim{seq: h.HeadSeq, hash: h.HeadHash, boot: h.Boot}
	if s.has && h.HeadSeq < s.next {
		if c.checkClaim(b, s, cl) && h.HeadSeq+1 < s.next {
			c.alert(b, s.id, event.AlertRewind, h.HeadSeq, fmt.Sprintf("engine %s (host %q) says its head is %d; %d entries after it were shipped",
				clip(h.Boot), clip(h.Host), h.HeadSeq, s.next-1-h.HeadSeq))
		}
		return
	}
	s.claims = append(s.claims, cl)
	if len(s.claims) > maxClaims {
		s.claims = slices.Delete(s.claims, 0, len(s.claims)-maxClaims)
	}
}

// checkClaim compares a head a hello named with the mirror's entry; a
// different hash is a fork, and the source is forked from then on.
func (c *Collector) checkClaim(b *batch, s *source, cl claim) bool {
	var got string
	if cl.seq+1 == s.next {
		got = s.prev.String()
	} else {
		raw, err := c.entryAt(s, cl.seq)
		if err != nil {
			return true
		}
		got = ledger.Sum(raw).String()
	}
	if got != cl.hash {
		s.forked = true
		c.alert(b, s.id, event.AlertFork, cl.seq, fmt.Sprintf("engine %s says entry %d hashes to %s; the one shipped hashes to %s: two histories under this ledger id",
			clip(cl.boot), cl.seq, clip(cl.hash), got))
		return false
	}
	return true
}

// inspect looks at an entry just taken: its key, its checkpoint, the
// hello heads it reaches.
func (c *Collector) inspect(b *batch, s *source, seq uint64, raw []byte) {
	for i := 0; i < len(s.claims); {
		if s.claims[i].seq == seq {
			c.checkClaim(b, s, s.claims[i])
			s.claims = slices.Delete(s.claims, i, i+1)
			continue
		}
		i++
	}
	switch {
	case bytes.HasSuffix(raw, keySuffix):
		c.takeKey(b, s, seq, raw)
	case bytes.HasSuffix(raw, checkpointSuffix):
		c.takeCheckpoint(b, s, seq, raw)
	}
}

// takeKey pins the source's first ledger.key; any later key other than
// the pinned one (or one off the allow-list) is an alert, and does not
// replace the pinned key.
func (c *Collector) takeKey(b *batch, s *source, seq uint64, raw []byte) {
	k, err := event.ParseKeyEntry(seq, raw)
	if err != nil {
		c.alert(b, s.id, event.AlertMalformed, seq, "ledger.key: "+err.Error())
		return
	}
	if len(s.keys) == 0 {
		s.keys, s.pinnedSeq = []tlog.Verifier{k.Verifier}, seq
		c.record(b, &event.FleetPinned{Source: s.id, VKey: k.Key.VKey, From: "ledger.key", Seq: seq})
		c.trustSource(s)
		if k.Key.Reason == event.KeyReplaced {
			c.alert(b, s.id, event.AlertKeyReplaced, seq, "the first key shipped says it replaced another: "+clip(k.Key.Detail))
		}
		return
	}
	for _, v := range s.keys {
		if v.String() == k.Key.VKey {
			return
		}
	}
	from := fmt.Sprintf("the key pinned at entry %d", s.pinnedSeq)
	if len(c.allow[s.id]) > 0 {
		from = "the allow-list"
	}
	c.alert(b, s.id, event.AlertKeyReplaced, seq, fmt.Sprintf("ledger.key %s (%s) is not %s; its checkpoints are not accepted", clip(k.Key.VKey), k.Key.Reason, from))
}

// checkpointNote reads a ledger.checkpoint entry's note.
func checkpointNote(raw []byte) (string, error) {
	e, err := ledger.ParseEntry(raw)
	if err != nil {
		return "", err
	}
	var cp event.Checkpoint
	if err := json.Unmarshal(e.Data, &cp); err != nil {
		return "", err
	}
	return cp.Note, nil
}

// openCheckpoint verifies a checkpoint note of seq with the source's
// keys: origin, size and signature.
func (c *Collector) openCheckpoint(s *source, seq uint64, note string) (tlog.Checkpoint, tlog.Verifier, error) {
	if len(s.keys) == 0 {
		return tlog.Checkpoint{}, tlog.Verifier{}, fmt.Errorf("a signed checkpoint, and no key pinned for the source (no ledger.key shipped before it)")
	}
	var last error
	for _, v := range s.keys {
		cp, err := tlog.Open([]byte(note), v)
		if err != nil {
			last = err
			continue
		}
		switch {
		case cp.Origin != event.Origin(s.id, v):
			return cp, v, fmt.Errorf("the checkpoint's origin is %s, not this source's", clip(cp.Origin))
		case cp.Size != seq:
			return cp, v, fmt.Errorf("the checkpoint at entry %d names tree size %d", seq, cp.Size)
		}
		return cp, v, nil
	}
	return tlog.Checkpoint{}, tlog.Verifier{}, last
}

// signedCheckpoint reports whether raw is a checkpoint of seq signed by
// the source's key.
func (c *Collector) signedCheckpoint(s *source, seq uint64, raw []byte) (tlog.Checkpoint, bool) {
	if !bytes.HasSuffix(raw, checkpointSuffix) {
		return tlog.Checkpoint{}, false
	}
	note, err := checkpointNote(raw)
	if err != nil || note == "" {
		return tlog.Checkpoint{}, false
	}
	cp, _, err := c.openCheckpoint(s, seq, note)
	return cp, err == nil
}

// takeCheckpoint verifies a checkpoint's signature now and its tree once
// the batch is committed.
func (c *Collector) takeCheckpoint(b *batch, s *source, seq uint64, raw []byte) {
	note, err := checkpointNote(raw)
	if err != nil {
		c.alert(b, s.id, event.AlertMalformed, seq, "ledger.checkpoint: "+err.Error())
		return
	}
	if note == "" {
		if len(s.keys) > 0 {
			c.alert(b, s.id, event.AlertBadSignature, seq, "an unsigned checkpoint after the source's key was pinned")
		}
		return
	}
	cp, v, err := c.openCheckpoint(s, seq, note)
	if err != nil {
		c.alert(b, s.id, event.AlertBadSignature, seq, err.Error())
		return
	}
	b.checks = append(b.checks, pendingCheckpoint{s: s, seq: seq, cp: cp, key: v, note: []byte(note)})
}

// checkTree compares a signed checkpoint with the mirror's own tree at
// its size (materialized by now): the same root proves the checkpoint
// is this history, and extends every earlier one.
func (c *Collector) checkTree(b *batch, p pendingCheckpoint) bool {
	th, err := p.s.trees.TreeHeadAt(p.seq)
	if err != nil {
		c.cfg.Logf("collector: source %s: tree at %d: %v", p.s.id, p.seq, err)
		return false
	}
	if th.Root != p.cp.Root {
		c.alert(b, p.s.id, event.AlertFork, p.seq, fmt.Sprintf("the source signed tree %d with root %s; the entries it shipped make root %s",
			p.seq, p.cp.RootString(), tlog.Checkpoint{Root: th.Root}.RootString()))
		return false
	}
	p.s.checkpoint = max(p.s.checkpoint, p.seq)
	return true
}

// cosign cosigns a verified checkpoint and records the cosigned note
// (published after the collector's ledger is synced).
//
// The checkpoint must also extend, and be larger than, the latest the
// witness cosigned for the source's origin on either path
// (witnessCheckNATS): an add-checkpoint over HTTP may have gone ahead.
func (c *Collector) cosign(b *batch, s *source, p pendingCheckpoint) {
	done := c.witnessCheckNATS(b, s, p)
	if done == nil {
		return
	}
	text, err := c.wit.Cosign(p.note, p.key)
	if err != nil {
		done(false)
		c.cfg.Logf("collector: source %s: cosign %d: %v", s.id, p.seq, err)
		return
	}
	_, err = c.record(b, &event.FleetCosigned{Source: s.id, TreeSize: p.seq, TreeRoot: p.cp.RootString(), Note: string(text)})
	done(err == nil)
	s.cosigned, s.cosigNote = p.seq, text
	c.unpublished(s)
}

// catchUpCosign cosigns, after a restart, the latest checkpoint the
// mirror holds when it is newer than the last one cosigned (the crash
// came between the mirror's commit and the cosignature's record).
func (c *Collector) catchUpCosign(ctx context.Context, s *source) {
	if !s.has || s.lastCheckpoint <= s.cosigned {
		return
	}
	raw, err := c.entryAt(s, s.lastCheckpoint)
	if err != nil {
		return
	}
	b := c.newBatch()
	c.takeCheckpoint(b, s, s.lastCheckpoint, raw)
	if len(b.checks) == 1 && c.checkTree(b, b.checks[0]) {
		c.cosign(b, s, b.checks[0])
	}
	c.own.Sync(ctx)
}

// scanMirror finds, on open, what the mirror's own entries say: its
// pinned key (when the collector's ledger has none: a crash between the
// two commits) and its latest checkpoint entry, not verified yet: the
// status's checkpoint stays the last one cosigned until it is.
func (c *Collector) scanMirror(s *source, l *ledger.Ledger) error {
	return l.RangeRaw(0, s.next-1, func(seq uint64, raw []byte) error {
		switch {
		case bytes.HasSuffix(raw, keySuffix) && len(s.keys) == 0:
			b := c.newBatch()
			c.takeKey(b, s, seq, raw)
		case bytes.HasSuffix(raw, checkpointSuffix):
			s.lastCheckpoint = seq // verified (and cosigned) by catchUpCosign
		}
		return nil
	})
}

// replayOwn reads the collector's own ledger: pinned keys, the latest
// cosigned checkpoint of each source, the alerts.
func (c *Collector) replayOwn() error {
	h, err := c.own.Head()
	if err != nil {
		return err
	}
	return c.own.RangeRaw(1, h.Seq, func(seq uint64, raw []byte) error {
		e, err := ledger.ParseEntry(raw)
		if err != nil {
			return err
		}
		p, err := event.Decode(e)
		if err != nil {
			return nil // not the collector's: left alone
		}
		switch p := p.(type) {
		case *event.FleetPinned:
			s := c.source(p.Source)
			if len(c.allow[p.Source]) == 0 {
				v, err := tlog.ParseVerifierKey(p.VKey)
				if err == nil {
					s.keys, s.pinnedSeq = []tlog.Verifier{v}, p.Seq
					c.trustSource(s)
				}
			}
		case *event.FleetWitnessed:
			c.book.advance(p.Origin, p.TreeSize, p.TreeRoot, p.Note)
		case *event.FleetCosigned:
			c.book.advance(cosignedOrigin(p), p.TreeSize, p.TreeRoot, p.Note)
			s := c.source(p.Source)
			if p.TreeSize > s.cosigned {
				s.cosigned, s.cosigNote = p.TreeSize, []byte(p.Note)
				c.unpublished(s)
				s.checkpoint = max(s.checkpoint, p.TreeSize)
			}
		case *event.FleetAlert:
			c.alerts.add(Alert{Seq: seq, Time: e.TS, Source: p.Source, Kind: p.Kind, SourceSeq: p.Seq, Detail: p.Detail}, seq)
		}
		return nil
	})
}

func clip(s string) string {
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}

// cosignedOrigin is the origin of a recorded cosignature: its note's
// first line when the source's key may sign for it (tlog.KeyOrigin: a
// team's ledger.origin), else the source's default origin.
func cosignedOrigin(p *event.FleetCosigned) string {
	line, _, _ := strings.Cut(p.Note, "\n")
	if o, ok := tlog.KeyOrigin(p.Source, line); ok && o == line {
		return line
	}
	return tlog.Origin(p.Source)
}

// recheckJournaled checks the checkpoint entries recovery found in the
// journal (recoverJournal): the crash may have come between their
// journal's sync and the check of their trees. Alerts already recorded
// are not recorded again; the latest verified beyond the last cosigned
// is cosigned.
func (c *Collector) recheckJournaled(ctx context.Context) {
	if len(c.recheck) == 0 {
		return
	}
	b := c.newBatch()
	for id, seqs := range c.recheck {
		s := c.sources[id]
		if s == nil || !s.has {
			continue
		}
		for _, seq := range seqs {
			if seq >= s.next {
				continue
			}
			if raw, err := c.entryAt(s, seq); err == nil {
				c.takeCheckpoint(b, s, seq, raw)
			}
		}
	}
	latest := map[*source]pendingCheckpoint{}
	for _, p := range b.checks {
		if c.checkTree(b, p) && p.seq > p.s.cosigned && p.seq > latest[p.s].seq {
			latest[p.s] = p
		}
	}
	for s, p := range latest {
		c.cosign(b, s, p)
	}
	if err := c.own.Sync(ctx); err != nil {
		c.cfg.Logf("collector: %v", err)
	}
	c.recheck = nil
}
