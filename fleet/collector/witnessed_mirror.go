package collector

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/opx-dev/opx/fleet/witnesshttp"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/tlog"
)

// An origin the collector both mirrors (a source, over NATS) and
// witnesses over add-checkpoint has two views of one log: the
// checkpoints it is sent, and the tree its mirror verified. The witness
// cosigns over HTTP only what agrees with the mirror:
//
//   - The mirror holds the checkpoint's size: the checkpoint's root must
//     be the mirror's root at that size. Another root is refused with
//     422 (the checkpoint is not consistent with the log as the witness
//     verified it: a 409 would tell the client to retry, which cannot
//     help) and is a fork alert whose detail carries the source's signed
//     note (two roots for one size under one key: the evidence).
//   - The mirror is behind (NATS has not delivered that size yet): the
//     witness cosigns on the consistency proof alone, as any witness
//     does, and keeps the earliest such checkpoint pending; once the
//     mirror holds its size (each commit checks), a root other than the
//     mirror's is a fork alert with the note the witness cosigned. The
//     NATS path checks the latest HTTP-cosigned size as well before it
//     cosigns (witnessCheckNATS), so whichever path comes first for a
//     size, the witness key cosigns one root for it and the other is an
//     alert.
//
// Checking the pending one, then the latest, is enough: each HTTP
// cosignature after the pending one was proved consistent with it, so
// when the mirror agrees at the latest size it agrees at every size
// cosigned before it.
//
// A tree cosigned far beyond what the source ships (a holder of the
// source's key proving a forged tree of any size) would never be
// compared, and the NATS path cosigns only above it: so once the source
// has shipped since and its mirror still lacks that size
// Config.WitnessAheadAfter after the cosignature, that is a gap alert
// (checkWitnessedAhead), and the status shows the size (SourceStatus.
// WitnessedAhead) for as long as the mirror lacks it.

// pendingWitnessed is a checkpoint cosigned over add-checkpoint that the
// mirror has not been compared with yet.
type pendingWitnessed struct {
	size uint64
	root [32]byte
	note []byte
	// at is when it became pending (cosigned, or bound after a restart);
	// alerted that checkWitnessedAhead raised its gap alert.
	at      time.Time
	alerted bool
}

// maxForkEvidence bounds the fork alerts add-checkpoint hands to the run
// loop between two of its turns (one per source and size at most; more
// are logged, and the run loop's own check finds them again).
const maxForkEvidence = 64

// forkEvidence is a fork add-checkpoint found: recorded as an alert by
// the run loop (which owns the alerts).
type forkEvidence struct {
	source string
	size   uint64
	detail string
}

// forkQueue carries forkEvidence from add-checkpoint to the run loop.
type forkQueue struct {
	mu   sync.Mutex
	list []forkEvidence
	wake chan struct{} // one pending wake-up at most
}

// bind notes that origin is the source id's, mirrored in m (nil: none
// yet). A mirror bound for the first time with a cosigned checkpoint
// already recorded (a restart) makes that checkpoint pending: it is
// compared with the mirror at the next check.
func (b *witnessBook) bind(origin, id string, m *mirrorTrees) {
	l := b.get(origin, true)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.source = id
	if m != nil && l.mirror == nil && l.size > 0 && l.pending.size == 0 {
		b.setPending(l, pendingWitnessed{size: l.size, root: l.root, note: l.note, at: time.Now()})
	}
	l.mirror = m
}

// unbindMirrors forgets every mirror (before they are closed): an
// add-checkpoint still being served finds none and fails with 500
// rather than read a closed ledger.
func (b *witnessBook) unbindMirrors() {
	b.mu.Lock()
	logs := make([]*witnessedLog, 0, len(b.logs))
	for _, l := range b.logs {
		logs = append(logs, l)
	}
	b.mu.Unlock()
	for _, l := range logs {
		l.mu.Lock()
		if l.source != "" {
			l.mirror, l.source = nil, closedSource
		}
		l.mu.Unlock()
	}
}

// closedSource marks an origin whose source's mirror is closed.
const closedSource = "\x00closed"

// checkMirror compares a checkpoint of l's origin (size, root, its
// signed note) with the mirror of l's source; l is locked. behind is
// true when the origin is a source's and its mirror does not hold size
// yet. A root other than the mirror's is witnesshttp.ErrBadProof (and a
// fork alert).
func (c *Collector) checkMirror(l *witnessedLog, size uint64, root [32]byte, signed []byte) (behind bool, err error) {
	switch {
	case l.source == "":
		return false, nil // not a source's origin
	case l.source == closedSource:
		return false, errors.New("the collector is closing")
	case l.mirror == nil || size == 0:
		return l.mirror == nil, nil // no mirror yet: compared once there is one
	}
	th, err := l.mirror.TreeHeadAt(size)
	switch {
	case errors.Is(err, ledger.ErrTreeSize):
		return true, nil
	case err != nil:
		return false, fmt.Errorf("the mirror of source %s: %w", l.source, err)
	case th.Root != root:
		c.forkSeen(l, size, th.Root, root, signed, "the entries shipped make root "+rootString(th.Root))
		return false, fmt.Errorf("%w: the tree of %d entries of source %s has root %s, not %s", witnesshttp.ErrBadProof,
			size, l.source, rootString(th.Root), rootString(root))
	}
	return false, nil
}

// forkSeen hands a fork add-checkpoint was sent to the run loop (for a
// source's origin; a --witness-logs log's is only logged): have is the
// root the collector knows for size (its mirror's, or the one it
// cosigned), signed the note that names another.
func (c *Collector) forkSeen(l *witnessedLog, size uint64, have, got [32]byte, signed []byte, why string) {
	detail := fmt.Sprintf("add-checkpoint sent tree %d with root %s, signed by a key trusted for the origin; %s (have %s). The note: %s",
		size, rootString(got), why, rootString(have), evidence(signed))
	if l.source == "" || l.source == closedSource {
		c.cfg.Logf("collector: witness: %s", clip(detail))
		return
	}
	q := &c.forks
	q.mu.Lock()
	if len(q.list) < maxForkEvidence {
		q.list = append(q.list, forkEvidence{source: l.source, size: size, detail: detail})
	} else {
		c.cfg.Logf("collector: witness: fork alerts queued beyond %d: %s", maxForkEvidence, clip(detail))
	}
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// takeForks records the forks add-checkpoint found as alerts (the run
// loop).
func (c *Collector) takeForks(b *batch) {
	q := &c.forks
	q.mu.Lock()
	list := q.list
	q.list = nil
	q.mu.Unlock()
	for _, f := range list {
		c.alert(b, f.source, event.AlertFork, f.size, f.detail)
	}
}

// checkWitnessed compares what add-checkpoint cosigned for s's origins
// beyond its mirror then with the mirror now (the run loop, after the
// mirror's commit): a root other than the mirror's is a fork alert.
func (c *Collector) checkWitnessed(b *batch, s *source) {
	if !s.has {
		return
	}
	for _, v := range s.keys {
		l := c.book.get(event.Origin(s.id, v), false)
		if l == nil {
			continue
		}
		var fork *forkEvidence
		l.mu.Lock()
		for l.pending.size > 0 {
			p := l.pending
			th, err := s.trees.TreeHeadAt(p.size)
			if err != nil {
				break // not there yet
			}
			if th.Root != p.root {
				fork = &forkEvidence{source: s.id, size: p.size, detail: fmt.Sprintf(
					"the collector cosigned tree %d with root %s over add-checkpoint before its mirror had it; the entries shipped make root %s. The note: %s",
					p.size, rootString(p.root), rootString(th.Root), evidence(p.note))}
				c.book.setPending(l, pendingWitnessed{})
				break
			}
			c.book.setPending(l, pendingWitnessed{})
			if l.size > p.size {
				c.book.setPending(l, pendingWitnessed{size: l.size, root: l.root, note: l.note, at: p.at})
			}
		}
		l.mu.Unlock()
		if fork != nil {
			c.alert(b, fork.source, event.AlertFork, fork.size, fork.detail)
		}
	}
}

// checkWitnessedAhead raises a gap alert when add-checkpoint cosigned a
// tree of one of s's origins that its mirror still lacks
// Config.WitnessAheadAfter later, although the source has shipped since
// (the mirror moved after the cosignature): an honest source ships the
// entries of every checkpoint it signs, so the mirror would have them.
// Once per pending checkpoint; the tick, with the other time bounds.
func (c *Collector) checkWitnessedAhead(b *batch, s *source, now time.Time) {
	if !s.has || !c.book.anyPending() {
		return
	}
	for _, v := range s.keys {
		l := c.book.get(event.Origin(s.id, v), false)
		if l == nil {
			continue
		}
		l.mu.Lock()
		p := l.pending
		due := p.size > s.next && !p.alerted && !p.at.IsZero() && s.progressAt.After(p.at) &&
			now.Sub(p.at) > c.cfg.WitnessAheadAfter
		if due {
			l.pending.alerted = true
		}
		l.mu.Unlock()
		if due {
			c.alert(b, s.id, event.AlertGap, p.size-1, fmt.Sprintf(
				"the collector cosigned tree %d over add-checkpoint %s ago; the source has shipped since and its mirror holds %d entries: the entries of that tree have not come (a tree the source never had, signed with its key, looks like this; the NATS path cosigns only above %d). The note: %s",
				p.size, now.Sub(p.at).Round(time.Second), s.next, p.size, evidence(p.note)))
		}
	}
}

// witnessedAhead is the largest tree add-checkpoint cosigned for s's
// origins that its mirror lacks (0: none), for the status.
func (c *Collector) witnessedAhead(s *source) uint64 {
	var ahead uint64
	if !c.book.anyPending() {
		return 0
	}
	for _, v := range s.keys {
		l := c.book.get(event.Origin(s.id, v), false)
		if l == nil {
			continue
		}
		l.mu.Lock()
		if l.pending.size > 0 && l.size > s.next && l.size > ahead {
			ahead = l.size
		}
		l.mu.Unlock()
	}
	return ahead
}

func rootString(r [32]byte) string { return tlog.Checkpoint{Root: r}.RootString() }

// maxEvidence bounds the note an alert quotes (the checkpoint's text and
// its first signatures: the log's among them when it signed first; the
// alert's detail is cut at event.MaxAlertDetail anyway).
const maxEvidence = 640

// evidence is a signed note as an alert quotes it.
func evidence(n []byte) string {
	if len(n) > maxEvidence {
		return string(n[:maxEvidence]) + "…"
	}
	return string(n)
}
