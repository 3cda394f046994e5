package ship

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// window is the publishes awaiting acknowledgement, oldest first. The
// cursor moves only as the oldest ones are acknowledged, so it is always
// the end of a contiguous acknowledged prefix.
type window struct {
	q      []pending
	bytes  int
	broken bool // a publish failed: the cursor stays where it is
}

type pending struct {
	f     jetstream.PubAckFuture
	seq   uint64
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
	w.q = append(w.q, pending{f: f, seq: seq, final: final, size: size})
	w.bytes += size
	return nil
}

// reap takes the acknowledgements already in, without waiting.
func (w *window) reap(s *Shipper) error {
	for len(w.q) > 0 {
		select {
		case a := <-w.q[0].f.Ok():
			w.pop(s, a)
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
		w.pop(s, a)
		return nil
	case err := <-w.q[0].f.Err():
		return w.failed(err)
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		w.broken = true
		return fmt.Errorf("publish %s: no acknowledgement", w.q[0].f.Msg().Header.Get(nats.MsgIdHdr))
	}
}

func (w *window) pop(s *Shipper, a *jetstream.PubAck) {
	p := w.q[0]
	w.q = w.q[1:]
	w.bytes -= p.size
	if p.final {
		s.ack(p.seq, a)
	}
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
				if !w.broken && p.final {
					s.ack(p.seq, a)
				}
				continue
			default:
				w.broken = true
				continue
			}
		}
		select {
		case a := <-p.f.Ok():
			if !w.broken && p.final {
				s.ack(p.seq, a)
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
