package collector

import (
	"context"
	"crypto/subtle"
	"fmt"
	"net"
	"os"
	"path/filepath"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/engine/registry"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
)

// Review while the collector runs: the collector holds each mirror's
// file (bbolt's lock), so, as a running engine does for its ledger, it
// serves each mirror's read-only LedgerService on a loopback port and
// registers it in the mirror's directory (engine.lock held, engine.json,
// client.token 0600). Every existing command that reads a ledger through
// the registry (`opx replay S --ledger STORE/sources/ID/ledger.db`) then
// reads the mirror through the collector; once it stops, from the file.

// maxServedMessage bounds a request to a mirror's service.
const maxServedMessage = 1 << 20

type served struct {
	lock *registry.Lock
	srv  *grpc.Server
	stop chan struct{}
}

// serve starts the service of a mirror (errors are logged: review then
// waits for the collector to stop).
func (c *Collector) serve(s *source) {
	if s.m == nil || s.served != nil {
		return
	}
	if err := c.startServing(s); err != nil {
		c.cfg.Logf("collector: source %s: serving its mirror for review: %v", s.id, err)
	}
}

func (c *Collector) startServing(s *source) error {
	path, err := filepath.Abs(s.m.Path())
	if err != nil {
		return err
	}
	lock, err := registry.Acquire(registry.Dir(filepath.Dir(path)))
	if err != nil {
		return err
	}
	tok, err := lock.NewToken()
	if err != nil {
		lock.Release()
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		lock.Release()
		return err
	}
	check := func(ctx context.Context) error {
		md, _ := metadata.FromIncomingContext(ctx)
		given := md.Get(opxv1.ClientTokenHeader)
		if len(given) != 1 || subtle.ConstantTimeCompare([]byte(given[0]), []byte(tok)) != 1 {
			return status.Error(codes.Unauthenticated, "the client token of this mirror is required")
		}
		return nil
	}
	srv := grpc.NewServer(grpc.MaxRecvMsgSize(maxServedMessage),
		grpc.UnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			if err := check(ctx); err != nil {
				return nil, err
			}
			return h(ctx, req)
		}),
		grpc.StreamInterceptor(func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			if err := check(ss.Context()); err != nil {
				return err
			}
			return h(srv, ss)
		}))
	stop := make(chan struct{})
	opxv1.RegisterLedgerServiceServer(srv, engine.NewReadOnlyLedgerService(s.m, stop))
	go srv.Serve(ln)
	pid := os.Getpid()
	if err := lock.Publish(registry.Entry{Workspace: "fleet source " + s.id, ManagerPID: pid, EnginePID: pid,
		Port: ln.Addr().(*net.TCPAddr).Port, Ledger: path}); err != nil {
		close(stop)
		srv.Stop()
		lock.Release()
		return fmt.Errorf("register: %w", err)
	}
	s.served = &served{lock: lock, srv: srv, stop: stop}
	return nil
}

// unserve stops a mirror's service and removes its registration.
func (s *source) unserve() {
	if s.served == nil {
		return
	}
	s.served.lock.Unpublish()
	close(s.served.stop)
	s.served.srv.Stop()
	s.served.lock.Release()
	s.served = nil
}
