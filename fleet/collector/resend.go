package collector

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/opx-dev/opx/fleet"
)

// # Resend requests
//
// A collector that lacks entries of a source asks the source's shipper
// to ship again (fleet.ResendRequest on the source's control subject,
// core NATS), from the first entry its mirror lacks (0: no genesis yet):
//   - when an entry has waited ResendAfter for an earlier one (the
//     earlier one may still come: a shipper's own resend);
//   - when the source has a gap (the reorder buffer overflowed or waited
//     GapAfter): what the buffer held is dropped and acknowledged, and
//     comes again with the resend;
//   - when the mirror stays ResendAfter behind the head the source's
//     hello named without moving (entries the stream no longer holds:
//     its retention, a restored store, a new durable).
// At most one request per source per fleet.ResendEvery (the shipper
// honours no more); a source that still lacks them is asked again then.
// The resent entries and blobs carry fresh message ids
// (fleet.ResendMsgID), so the stream's duplicate window keeps none of
// them away; what the mirror already holds is dropped here, byte for
// byte (a different one is a rewrite or a fork, as for any entry).

// checkBehind asks s to resend when it waits for an entry.
func (c *Collector) checkBehind(s *source, now time.Time) {
	switch {
	case len(s.held) > 0:
		oldest := now
		for _, h := range s.held {
			if h.at.Before(oldest) {
				oldest = h.at
			}
		}
		if oldest.Before(now.Add(-c.cfg.ResendAfter)) {
			c.askResend(s, fmt.Sprintf("%d entries wait for entry %d", len(s.held), s.next))
		}
	case s.hello != nil && (!s.has || s.hello.HeadSeq >= s.next) && !s.progressAt.IsZero() &&
		s.progressAt.Before(now.Add(-c.cfg.ResendAfter)):
		at := "no genesis yet"
		if s.has {
			at = fmt.Sprintf("the mirror is at %d", s.next-1)
		}
		c.askResend(s, fmt.Sprintf("%s, the source's hello named head %d", at, s.hello.HeadSeq))
	}
}

// askResend publishes a resend request for s from the first entry its
// mirror lacks, unless one was published within fleet.ResendEvery (or
// the collector is not connected).
func (c *Collector) askResend(s *source, why string) {
	now := time.Now()
	if c.nc == nil || now.Sub(s.resendAt) < fleet.ResendEvery {
		return
	}
	var e [16]byte
	rand.Read(e[:])
	from := s.next
	if !s.has {
		from = 0
	}
	m, err := fleet.ResendMessage(c.cfg.Prefix, fleet.ResendRequest{LedgerID: s.id, From: from, Epoch: hex.EncodeToString(e[:]), Reason: why})
	if err == nil {
		err = c.nc.PublishMsg(m)
	}
	if err != nil {
		c.cfg.Logf("collector: source %s: resend request from %d: %v", s.id, from, err)
		return
	}
	s.resendAt, s.resendFrom, c.dirty = now, from, true
	s.resends++
	c.cfg.Logf("collector: source %s: asked to resend from %d (%s)", s.id, from, why)
}
