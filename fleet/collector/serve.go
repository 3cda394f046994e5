package collector

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/opx-dev/opx/engine/grpcapi"
	"github.com/opx-dev/opx/engine/registry"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
)

// Review while the collector runs: the collector holds each mirror's
// file (bbolt's lock), so, as a running engine does for its ledger, it
// serves each mirror's read-only LedgerService (one loopback listener for all) and
// registers it in the mirror's directory (engine.lock held, engine.json,
// client.token 0600). Every existing command that reads a ledger through
// the registry (`opx replay S --ledger STORE/sources/ID/ledger.db`) then
// reads the mirror through the collector; once it stops, from the file.

// One gRPC server on one loopback listener serves every mirror: the
// token a client sends (the one in the mirror's client.token) picks the
// mirror; a token no mirror has is refused.

// maxServedMessage bounds a request to a mirror's service.
const maxServedMessage = 1 << 20

type served struct {
	lock  *registry.Lock
	token string
	stop  chan struct{}
}

// mirrorServer is the collector's one server of mirrors.
type mirrorServer struct {
	ln  net.Listener
	srv *grpc.Server
	mu  sync.RWMutex
	by  map[string]opxv1.LedgerServiceServer // token -> its mirror's service
}

func (ms *mirrorServer) lookup(ctx context.Context) (opxv1.LedgerServiceServer, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	given := md.Get(opxv1.ClientTokenHeader)
	if len(given) == 1 {
		ms.mu.RLock()
		svc := ms.by[given[0]]
		ms.mu.RUnlock()
		if svc != nil {
			return svc, nil
		}
	}
	return nil, status.Error(codes.Unauthenticated, "the client token of a mirror is required")
}

// desc is the LedgerService's description with each handler given the
// service of the mirror its token names.
func (ms *mirrorServer) desc() *grpc.ServiceDesc {
	d := opxv1.LedgerService_ServiceDesc
	d.Methods = append([]grpc.MethodDesc{}, d.Methods...)
	for i := range d.Methods {
		h := d.Methods[i].Handler
		d.Methods[i].Handler = func(_ any, ctx context.Context, dec func(any) error, ic grpc.UnaryServerInterceptor) (any, error) {
			svc, err := ms.lookup(ctx)
			if err != nil {
				return nil, err
			}
			return h(svc, ctx, dec, ic)
		}
	}
	d.Streams = append([]grpc.StreamDesc{}, d.Streams...)
	for i := range d.Streams {
		h := d.Streams[i].Handler
		d.Streams[i].Handler = func(_ any, ss grpc.ServerStream) error {
			svc, err := ms.lookup(ss.Context())
			if err != nil {
				return err
			}
			return h(svc, ss)
		}
	}
	return &d
}

// mirrors starts the server of mirrors on first use.
func (c *Collector) mirrors() (*mirrorServer, error) {
	if c.ms != nil {
		return c.ms, nil
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	ms := &mirrorServer{ln: ln, by: map[string]opxv1.LedgerServiceServer{}}
	ms.srv = grpc.NewServer(grpc.MaxRecvMsgSize(maxServedMessage))
	ms.srv.RegisterService(ms.desc(), struct{ opxv1.LedgerServiceServer }{})
	go ms.srv.Serve(ln)
	c.ms = ms
	return ms, nil
}

// stopMirrors stops the server of mirrors (after every unserve).
func (c *Collector) stopMirrors() {
	if c.ms != nil {
		c.ms.srv.Stop()
		c.ms = nil
	}
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
	ms, err := c.mirrors()
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
	stop := make(chan struct{})
	ms.mu.Lock()
	ms.by[tok] = grpcapi.NewReadOnlyLedgerService(s.m, stop)
	ms.mu.Unlock()
	pid := os.Getpid()
	if err := lock.Publish(registry.Entry{Workspace: "fleet source " + s.id, ManagerPID: pid, EnginePID: pid,
		Port: ms.ln.Addr().(*net.TCPAddr).Port, Ledger: path}); err != nil {
		ms.mu.Lock()
		delete(ms.by, tok)
		ms.mu.Unlock()
		close(stop)
		lock.Release()
		return fmt.Errorf("register: %w", err)
	}
	s.served = &served{lock: lock, token: tok, stop: stop}
	return nil
}

// unserve stops serving a mirror and removes its registration.
func (c *Collector) unserve(s *source) {
	if s.served == nil {
		return
	}
	s.served.lock.Unpublish()
	if c.ms != nil {
		c.ms.mu.Lock()
		delete(c.ms.by, s.served.token)
		c.ms.mu.Unlock()
	}
	close(s.served.stop)
	s.served.lock.Release()
	s.served = nil
}
