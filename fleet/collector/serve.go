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
// file (bbolt's lock) while it has it open, so, as a running engine does
// for its ledger, it serves each mirror's read-only LedgerService (one
// loopback listener for all) and registers it in the mirror's directory
// (engine.json, client.token 0600). Every existing command that reads a
// ledger through the registry (`opx replay S --ledger
// STORE/sources/ID/ledger.db`) then reads the mirror through the
// collector; once it stops, from the file.
//
// The registry's lock is the store's (STORE/engine.lock, held by the
// collector for its whole life: one collector per store); each mirror's
// engine.lock is a symbolic link to it (registry.Lock.Share), so a
// registered mirror costs two small files and no descriptor, and a
// request opens the mirror only while it is served (mirrors.go).

// One gRPC server on one loopback listener serves every mirror: the
// token a client sends (the one in the mirror's client.token) picks the
// mirror; a token no mirror has is refused.

// maxServedMessage bounds a request to a mirror's service.
const maxServedMessage = 1 << 20

// mirrorServer is the collector's one server of mirrors.
type mirrorServer struct {
	ln    net.Listener
	srv   *grpc.Server
	cache *mirrorCache
	stop  chan struct{} // closed when the server stops
	mu    sync.RWMutex
	by    map[string]string // token -> its mirror's source id
	ids   map[string]string // source id -> its token ("" while registered)
}

// lookup returns the service of the mirror the request's token names,
// with the mirror held open until release.
func (ms *mirrorServer) lookup(ctx context.Context) (svc opxv1.LedgerServiceServer, release func(), err error) {
	md, _ := metadata.FromIncomingContext(ctx)
	given := md.Get(opxv1.ClientTokenHeader)
	if len(given) == 1 {
		ms.mu.RLock()
		id, ok := ms.by[given[0]]
		ms.mu.RUnlock()
		if ok {
			l, release, err := ms.cache.acquire(id, nil)
			if err != nil {
				return nil, nil, status.Errorf(codes.Unavailable, "the mirror of source %s: %v", id, err)
			}
			return grpcapi.NewReadOnlyLedgerService(l, ms.stop), release, nil
		}
	}
	return nil, nil, status.Error(codes.Unauthenticated, "the client token of a mirror is required")
}

// desc is the LedgerService's description with each handler given the
// service of the mirror its token names.
func (ms *mirrorServer) desc() *grpc.ServiceDesc {
	d := opxv1.LedgerService_ServiceDesc
	d.Methods = append([]grpc.MethodDesc{}, d.Methods...)
	for i := range d.Methods {
		h := d.Methods[i].Handler
		d.Methods[i].Handler = func(_ any, ctx context.Context, dec func(any) error, ic grpc.UnaryServerInterceptor) (any, error) {
			svc, release, err := ms.lookup(ctx)
			if err != nil {
				return nil, err
			}
			defer release()
			return h(svc, ctx, dec, ic)
		}
	}
	d.Streams = append([]grpc.StreamDesc{}, d.Streams...)
	for i := range d.Streams {
		h := d.Streams[i].Handler
		d.Streams[i].Handler = func(_ any, ss grpc.ServerStream) error {
			svc, release, err := ms.lookup(ss.Context())
			if err != nil {
				return err
			}
			defer release()
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
	ms := &mirrorServer{ln: ln, cache: c.cache, stop: make(chan struct{}), by: map[string]string{}, ids: map[string]string{}}
	ms.srv = grpc.NewServer(grpc.MaxRecvMsgSize(maxServedMessage))
	ms.srv.RegisterService(ms.desc(), struct{ opxv1.LedgerServiceServer }{})
	go ms.srv.Serve(ln)
	c.ms = ms
	return ms, nil
}

// stopMirrors stops the server of mirrors (after unserveAll).
func (c *Collector) stopMirrors() {
	if c.ms != nil {
		close(c.ms.stop)
		c.ms.srv.Stop()
		c.ms = nil
	}
}

// serve has a mirror registered for review once it is written, while
// the collector runs, by the registrar's goroutine (a file or two each:
// thousands take seconds, which the run loop does not wait for).
func (c *Collector) serve(s *source) {
	r := c.reg
	if r == nil || c.mat.next(s) == 0 {
		return
	}
	r.mu.Lock()
	r.ids = append(r.ids, s.id)
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// registrar registers mirrors for review in the background.
type registrar struct {
	mu   sync.Mutex
	ids  []string
	wake chan struct{}
}

// serveAll starts the registrar with every mirror written; it runs
// until stop (errors are logged: review then waits for the collector to
// stop). wait returns once it ended.
func (c *Collector) serveAll(stop <-chan struct{}) (wait func()) {
	if c.nc == nil || c.lock == nil {
		return func() {}
	}
	ms, err := c.mirrors()
	if err != nil {
		c.cfg.Logf("collector: serving mirrors for review: %v", err)
		return func() {}
	}
	r := &registrar{wake: make(chan struct{}, 1)}
	for _, s := range c.sources {
		if c.mat.next(s) > 0 {
			r.ids = append(r.ids, s.id)
		}
	}
	c.reg = r
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			r.mu.Lock()
			ids := r.ids
			r.ids = nil
			r.mu.Unlock()
			for _, id := range ids {
				select {
				case <-stop:
					return
				default:
				}
				c.register(ms, id)
			}
			select {
			case <-stop:
				return
			case <-r.wake:
			}
		}
	}()
	return func() {
		<-done
		c.reg = nil
	}
}

// register writes the registry entry of source id's mirror, once.
func (c *Collector) register(ms *mirrorServer, id string) {
	ms.mu.Lock()
	if _, ok := ms.ids[id]; ok {
		ms.mu.Unlock()
		return
	}
	ms.ids[id] = "" // being registered
	ms.mu.Unlock()
	tok, err := c.startServing(ms, id)
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if err != nil {
		delete(ms.ids, id)
		c.cfg.Logf("collector: source %s: serving its mirror for review: %v", id, err)
		return
	}
	ms.ids[id] = tok
	ms.by[tok] = id
}

func (c *Collector) startServing(ms *mirrorServer, id string) (string, error) {
	path, err := filepath.Abs(SourcePath(c.cfg.Store, id))
	if err != nil {
		return "", err
	}
	pid := os.Getpid()
	tok, err := c.lock.Share(registry.Dir(filepath.Dir(path)), registry.Entry{Workspace: "fleet source " + id, ManagerPID: pid, EnginePID: pid,
		ManagerStart: c.started, EngineStart: c.started, Port: ms.ln.Addr().(*net.TCPAddr).Port, Ledger: path})
	if err != nil {
		return "", fmt.Errorf("register: %w", err)
	}
	return tok, nil
}

// unserveAll stops serving every mirror and removes their
// registrations (after serveAll's goroutine ended).
func (c *Collector) unserveAll() {
	if c.ms == nil {
		return
	}
	c.ms.mu.Lock()
	ids := c.ms.ids
	c.ms.ids, c.ms.by = map[string]string{}, map[string]string{}
	c.ms.mu.Unlock()
	for id := range ids {
		registry.Unshare(registry.Dir(filepath.Dir(SourcePath(c.cfg.Store, id))))
	}
}

// lockStore takes the store's registry lock: one collector per store,
// and the lock every served mirror's registration links to.
func lockStore(store string) (*registry.Lock, error) {
	l, err := registry.Acquire(registry.Dir(store))
	if err != nil {
		return nil, fmt.Errorf("collector: store %s: %w", store, err)
	}
	return l, nil
}
