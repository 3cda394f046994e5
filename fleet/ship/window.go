package ship

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/opx-dev/opx/fleet"
)

// window is the publishes awaiting acknowledgement, oldest first. The
// cursor moves only as the oldest ones are acknowledged, so it is always
// the end of a contiguous acknowledged prefix.
type window struct {
	q      []pending
	bytes  int
	broken bool // a publish failed: the cursor stays where it is
	// forked: a part of entry conflictSeq was acknowledged as a duplicate
	// of other stored bytes (another history got there first).
	forked      bool
	conflictSeq uint64
	st          jetstream.Stream // the ledger stream, for reading stored messages
	reblobbed   map[string]bool  // blobs published again in this session
}

type pending struct {
	f     jetstream.PubAckFuture
	seq   uint64
	entry bool // a part of entry seq
	blob  bool // a part of a blob
	final bool // the last part of entry seq
	size  int
}

// publish sends m once the window has room, waiting for the oldest
// acknowledgements as needed.
func (w *window) publish(ctx context.Context, s *Shipper, m *nats.Msg, seq uint64, final bool) error {
	size := len(m.Data) + 512
	for len(w.q) >= MaxInFlight || (len(w.q) > 0 && w.bytes+size > MaxInFlightBytes) {
		if err := w.waitOldest(ctx, s); err != nil {
			return err
		}
	}
	f, err := s.js.PublishMsgAsync(m)
	if err != nil {
		return fmt.Errorf("publish %s: %w", m.Header.Get(nats.MsgIdHdr), err)
	}
	kind := m.Header.Get(fleet.HdrKind)
	w.q = append(w.q, pending{f: f, seq: seq, entry: kind == string(fleet.KindEntry), blob: kind == string(fleet.KindBlob), final: final, size: size})
	w.bytes += size
	return nil
}

// reap takes the acknowledgements already in, without waiting.
func (w *window) reap(s *Shipper) error {
	for len(w.q) > 0 {
		select {
		case a := <-w.q[0].f.Ok():
			if err := w.pop(context.Background(), s, a); err != nil {
				return err
			}
		case err := <-w.q[0].f.Err():
			return w.failed(err)
		default:
			return nil
		}
	}
	return nil
}

// waitAll waits until every publish is acknowledged.
func (w *window) waitAll(ctx context.Context, s *Shipper) error {
	for len(w.q) > 0 {
		if err := w.waitOldest(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

func (w *window) waitOldest(ctx context.Context, s *Shipper) error {
	// The publish timeout ends every future; this is a backstop.
	t := time.NewTimer(ackTimeout + time.Second)
	defer t.Stop()
	select {
	case a := <-w.q[0].f.Ok():
		return w.pop(ctx, s, a)
	case err := <-w.q[0].f.Err():
		return w.failed(err)
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		w.broken = true
		return fmt.Errorf("publish %s: no acknowledgement", w.q[0].f.Msg().Header.Get(nats.MsgIdHdr))
	}
}

func (w *window) pop(ctx context.Context, s *Shipper, a *jetstream.PubAck) error {
	p := w.q[0]
	w.q = w.q[1:]
	w.bytes -= p.size
	if err := w.settle(ctx, s, p, a); err != nil {
		w.broken = true
		return err
	}
	return nil
}

// settle takes publish p's acknowledgement a. A duplicate is a claim to
// check, not a success (RV17 #1): JetStream drops any message whose id it
// holds, whatever its bytes, so the stored message is read back and
// compared. An entry stored with other bytes (another history under this
// ledger id, or a squatter) is published again under fleet.ConflictMsgID
// for the collector to see and flag, said in the last error and counted
// in Status.Conflicts; only once that is acknowledged does the cursor
// move past it.
func (w *window) settle(ctx context.Context, s *Shipper, p pending, a *jetstream.PubAck) error {
	if a.Duplicate && p.blob {
		// A blob part's id names the blob's hash: other bytes under it
		// are a forgery (or another compression of the same content).
		// The whole blob goes again under fresh ids, so the collector
		// can assemble it from one frame.
		same, err := w.storedSame(ctx, s, a, p.f.Msg())
		if err != nil {
			return err
		}
		if h := p.f.Msg().Header.Get(fleet.HdrBlob); !same && !w.reblobbed[h] {
			if w.reblobbed == nil || len(w.reblobbed) >= maxBlobsSeen {
				w.reblobbed = map[string]bool{}
			}
			w.reblobbed[h] = true
			return s.republishBlob(ctx, p.f.Msg())
		}
	}
	if a.Duplicate && p.entry {
		same, err := w.storedSame(ctx, s, a, p.f.Msg())
		if err != nil {
			return err
		}
		if !same && !(w.forked && w.conflictSeq == p.seq) {
			w.forked, w.conflictSeq = true, p.seq
		}
	}
	if !p.final {
		return nil
	}
	if w.forked && w.conflictSeq == p.seq {
		w.forked = false
		if err := s.publishConflict(ctx, p.seq); err != nil {
			return err
		}
	}
	s.ack(p.seq, a)
	return nil
}

// storedSame reads the message JetStream holds at the duplicate's
// sequence and says whether it is m (subject, part headers and bytes). A
// stored message gone since (retention) counts as different: publishing
// the entry again under its conflict id is harmless (the collector drops
// equal bytes) and it cannot be lost.
func (w *window) storedSame(ctx context.Context, s *Shipper, a *jetstream.PubAck, m *nats.Msg) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, ackTimeout)
	defer cancel()
	if w.st == nil {
		st, err := s.js.Stream(ctx, fleet.LedgerStream(s.cfg.Prefix))
		if err != nil {
			return false, fmt.Errorf("stream: %w", err)
		}
		w.st = st
	}
	sm, err := w.st.GetMsg(ctx, a.Sequence)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading the stored message %d of duplicate %s: %w", a.Sequence, m.Header.Get(nats.MsgIdHdr), err)
	}
	for _, h := range []string{fleet.HdrKind, fleet.HdrSeq, fleet.HdrSize, fleet.HdrPart} {
		if sm.Header.Get(h) != m.Header.Get(h) {
			return false, nil
		}
	}
	return sm.Subject == m.Subject && bytes.Equal(sm.Data, m.Data), nil
}

// failed takes the oldest publish out as failed: nothing after it moves
// the cursor any more.
func (w *window) failed(err error) error {
	p := w.q[0]
	w.q = w.q[1:]
	w.bytes -= p.size
	w.broken = true
	return fmt.Errorf("publish %s: %w", p.f.Msg().Header.Get(nats.MsgIdHdr), err)
}

// drain ends a session: the outstanding publishes are still waited for
// (all of them at most ackTimeout, a stopping shipper 2 s), so that a
// resend starts only once they are settled, and the cursor takes each
// acknowledgement up to the first publish that failed; what follows is
// resent. A failed publish also forgets the blobs shipped, so that the
// resend carries them again.
func (w *window) drain(ctx context.Context, s *Shipper) {
	d := ackTimeout + time.Second
	if ctx.Err() != nil {
		d = 2 * time.Second
	}
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	expired := false
	for len(w.q) > 0 {
		p := w.q[0]
		w.q = w.q[1:]
		w.bytes -= p.size
		if expired {
			select {
			case a := <-p.f.Ok():
				if !w.broken && w.settle(ctx, s, p, a) != nil {
					w.broken = true
				}
				continue
			default:
				w.broken = true
				continue
			}
		}
		select {
		case a := <-p.f.Ok():
			if !w.broken && w.settle(ctx, s, p, a) != nil {
				w.broken = true
			}
		case <-p.f.Err():
			w.broken = true
		case <-deadline.C:
			expired, w.broken = true, true
		}
	}
	if w.broken {
		s.mu.Lock()
		clear(s.blobsSeen)
		s.mu.Unlock()
	}
}
