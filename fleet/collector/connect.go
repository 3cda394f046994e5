package collector

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
)

// Bounds of connect's waits between attempts.
const (
	connectFirstWait = 250 * time.Millisecond
	connectMaxWait   = 5 * time.Second
)

// connect connects to the NATS server, trying again while the failure is
// one a server that is starting, restarting or overloaded gives (refused,
// reset, timed out, no server answering), until ctx ends: a collector
// started before its server, or whose first handshake timed out on a
// busy machine, waits for it rather than exiting. A failure no wait
// cures (credentials refused, TLS, a malformed URL) is returned at once.
// Each attempt that fails is logged with the wait before the next; the
// waits double from connectFirstWait to connectMaxWait.
func (c *Collector) connect(ctx context.Context, opts []nats.Option) (*nats.Conn, error) {
	wait := connectFirstWait
	for {
		nc, err := nats.Connect(c.cfg.URL, opts...)
		if err == nil {
			return nc, nil
		}
		err = fmt.Errorf("collector: connect %s: %w", redact(c.cfg.URL), err)
		if !transientConnectError(err) {
			return nil, err
		}
		c.cfg.Logf("%v (trying again in %v)", err, wait)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, err
		case <-t.C:
		}
		wait = min(2*wait, connectMaxWait)
	}
}

// transientConnectError reports whether err is a connect failure that
// may pass by itself.
func transientConnectError(err error) bool {
	var ne net.Error
	return errors.Is(err, nats.ErrNoServers) || errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		(errors.As(err, &ne) && ne.Timeout())
}
