package witnesshttp

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"sync"
	"time"
)

// ServeConfig bounds the connections Serve takes.
type ServeConfig struct {
	// TLS, if set, serves HTTPS with it (TLS 1.2 at least, whatever it
	// says); nil serves plain HTTP.
	TLS *tls.Config
	// MaxConns bounds the connections open at once, TLS handshakes
	// included (DefaultMaxConns when 0): one more waits in the kernel's
	// backlog until one closes.
	MaxConns int
	// HeaderTimeout bounds the TLS handshake and the reading of a
	// request's header (DefaultHeaderTimeout when 0): a client that
	// sends them slowly, or nothing, is cut then.
	HeaderTimeout time.Duration
}

// Defaults of ServeConfig.
const (
	DefaultMaxConns      = 256
	DefaultHeaderTimeout = 5 * time.Second
)

// Serve serves h on ln until ctx ends, with bounded connections,
// handshake, header, read, write and idle times, then shuts down
// (waiting up to 5 s for requests being served). Connection-level
// errors (a failed handshake, plain HTTP sent to HTTPS) are not logged:
// they are what any client may send.
func Serve(ctx context.Context, ln net.Listener, h http.Handler, sc ServeConfig) error {
	if sc.MaxConns <= 0 {
		sc.MaxConns = DefaultMaxConns
	}
	if sc.HeaderTimeout <= 0 {
		sc.HeaderTimeout = DefaultHeaderTimeout
	}
	ln = &limitListener{Listener: ln, slots: make(chan struct{}, sc.MaxConns), closed: make(chan struct{})}
	if sc.TLS != nil {
		cfg := sc.TLS.Clone()
		cfg.MinVersion = max(cfg.MinVersion, tls.VersionTLS12)
		ln = tls.NewListener(ln, cfg)
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: sc.HeaderTimeout, // and the TLS handshake's (net/http takes the least)
		ReadTimeout:       DefaultTimeout,
		WriteTimeout:      DefaultTimeout + 5*time.Second,
		IdleTimeout:       90 * time.Second,
		MaxHeaderBytes:    16 << 10,
		ErrorLog:          log.New(io.Discard, "", 0),
	}
	done, stop := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		select {
		case <-ctx.Done():
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			srv.Shutdown(sctx)
		case <-stop: // Serve failed
		}
	}()
	err := srv.Serve(ln)
	close(stop)
	<-done
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// limitListener accepts at most cap(slots) connections open at once.
type limitListener struct {
	net.Listener
	slots     chan struct{}
	closed    chan struct{}
	closeOnce sync.Once
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.closed:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.slots }}, nil
}

func (l *limitListener) Close() error {
	l.closeOnce.Do(func() { close(l.closed) })
	return l.Listener.Close()
}

// limitConn gives its slot back once, at its first Close.
type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
