package natsrv

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// MaxPayload is the largest message the embedded servers accept. opx's
// fleet messages are at most fleet.MaxChunk plus headers, so the servers'
// default (1 MiB) would do; this leaves room and is stated so that an
// external cluster can be configured the same.
const MaxPayload = 8 << 20

// readyTimeout bounds a server's start.
const readyTimeout = 60 * time.Second

// Options configure one embedded server.
type Options struct {
	// Dir holds its JetStream store (created 0700). Required.
	Dir string
	// Name is its server name (unique in a cluster); "opx" by default.
	Name string
	// Host and Port it listens on for clients: 127.0.0.1 and a free
	// port by default.
	Host string
	Port int
	// Cluster, when set, is the cluster's name: the server listens for
	// routes on ClusterPort (a free loopback port when 0) and connects to
	// Routes (other members' route URLs).
	Cluster     string
	ClusterPort int
	Routes      []string
	// Guard, when set, keeps some subjects to one client: see Guard.
	Guard *Guard
}

// Guard splits a server's clients in two. The owner (the collector)
// authenticates with User and Password and may publish anywhere. Every
// other client connects as before, without credentials (engines keep
// their configuration), as the user NoAuthUser, which may publish
// anywhere except on Owned: whoever reaches the server may then not
// publish a cosignature, nor purge, delete or reconfigure a stream.
type Guard struct {
	User     string
	Password string
	// Owned are the subjects (wildcards allowed) only the owner may
	// publish on; fleet.CollectorOnly names opx's.
	Owned []string
}

// NoAuthUser is the user a client without credentials is on a guarded
// server.
const NoAuthUser = "opx-client"

// Server is a running embedded server.
type Server struct {
	s    *server.Server
	opts Options
}

// Start starts a server and waits until it takes connections.
func Start(o Options) (*Server, error) {
	if o.Dir == "" {
		return nil, errors.New("natsrv: a store directory is required")
	}
	if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return nil, err
	}
	if o.Name == "" {
		o.Name = "opx"
	}
	if o.Host == "" {
		o.Host = "127.0.0.1"
	}
	port := o.Port
	if port == 0 {
		port = server.RANDOM_PORT
	}
	so := &server.Options{
		ServerName: o.Name,
		Host:       o.Host,
		Port:       port,
		NoLog:      true,
		NoSigs:     true,
		JetStream:  true,
		StoreDir:   filepath.Join(o.Dir, "jetstream"),
		MaxPayload: MaxPayload,
	}
	if g := o.Guard; g != nil {
		if g.User == "" || g.User == NoAuthUser || g.Password == "" {
			return nil, errors.New("natsrv: a guard needs a user (not " + NoAuthUser + ") and a password")
		}
		// The no-auth user's password is never told anyone: a client
		// without credentials is mapped to it, none logs in as it.
		var pw [16]byte
		if _, err := rand.Read(pw[:]); err != nil {
			return nil, err
		}
		so.Users = []*server.User{
			{Username: g.User, Password: g.Password},
			{Username: NoAuthUser, Password: hex.EncodeToString(pw[:]), Permissions: &server.Permissions{
				Publish: &server.SubjectPermission{Allow: []string{">"}, Deny: g.Owned},
			}},
		}
		so.NoAuthUser = NoAuthUser
	}
	if o.Cluster != "" {
		cp := o.ClusterPort
		if cp == 0 {
			cp = server.RANDOM_PORT
		}
		so.Cluster = server.ClusterOpts{Name: o.Cluster, Host: o.Host, Port: cp}
		for _, r := range o.Routes {
			u, err := url.Parse(r)
			if err != nil {
				return nil, fmt.Errorf("natsrv: route %q: %w", r, err)
			}
			so.Routes = append(so.Routes, u)
		}
	}
	s, err := server.NewServer(so)
	if err != nil {
		return nil, fmt.Errorf("natsrv: %w", err)
	}
	go s.Start()
	if !s.ReadyForConnections(readyTimeout) {
		s.Shutdown()
		return nil, fmt.Errorf("natsrv: the server did not take connections within %v", readyTimeout)
	}
	srv := &Server{s: s, opts: o}
	// Keep the ports it got, so that a restart (Restart) comes back where
	// its clients and peers look for it.
	if a, ok := s.Addr().(*net.TCPAddr); ok {
		srv.opts.Port = a.Port
	}
	if o.Cluster != "" {
		if a := s.ClusterAddr(); a != nil {
			srv.opts.ClusterPort = a.Port
		}
	}
	return srv, nil
}

// ClientURL is the URL clients connect to.
func (s *Server) ClientURL() string { return fmt.Sprintf("nats://%s:%d", s.opts.Host, s.opts.Port) }

// RouteURL is the URL other members route to (cluster servers only).
func (s *Server) RouteURL() string {
	return fmt.Sprintf("nats://%s:%d", s.opts.Host, s.opts.ClusterPort)
}

// Options returns the options it runs with, its ports included.
func (s *Server) Options() Options { return s.opts }

// NATS is the server itself, for what this package does not wrap.
func (s *Server) NATS() *server.Server { return s.s }

// Shutdown stops the server and waits until it has.
func (s *Server) Shutdown() {
	s.s.Shutdown()
	s.s.WaitForShutdown()
}

// Restart starts a stopped server again on the same ports and store.
func (s *Server) Restart() (*Server, error) { return Start(s.opts) }

// Cluster is n servers on loopback forming one JetStream cluster.
type Cluster struct {
	Servers []*Server
}

// StartCluster starts n servers (stores in dir/n1, dir/n2, …) that form
// one cluster named name, and waits until JetStream has a leader.
//
// Each member is given routes to every other member from its start: a
// clustered JetStream server without configured routes refuses to start
// ("JetStream cluster requires configured routes"), so the route ports
// are chosen (free loopback ports) before any member starts.
func StartCluster(dir, name string, n int) (*Cluster, error) {
	ports, err := freePorts("127.0.0.1", n)
	if err != nil {
		return nil, err
	}
	c := &Cluster{}
	for i := range n {
		o := Options{Dir: filepath.Join(dir, fmt.Sprintf("n%d", i+1)), Name: fmt.Sprintf("%s-n%d", name, i+1), Cluster: name, ClusterPort: ports[i]}
		for j, p := range ports {
			if j != i {
				o.Routes = append(o.Routes, fmt.Sprintf("nats://127.0.0.1:%d", p))
			}
		}
		s, err := Start(o)
		if err != nil {
			c.Shutdown()
			return nil, err
		}
		c.Servers = append(c.Servers, s)
	}
	if err := c.WaitReady(readyTimeout); err != nil {
		c.Shutdown()
		return nil, err
	}
	return c, nil
}

// freePorts returns n distinct free TCP ports on host: each was bound and
// released, so another process could take one before its server does
// (the server's start then fails and says so).
func freePorts(host string, n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
		if err != nil {
			return nil, fmt.Errorf("natsrv: choosing a route port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// ClientURLs is every member's client URL, comma-separated as nats.Connect
// takes them.
func (c *Cluster) ClientURLs() string {
	var u string
	for i, s := range c.Servers {
		if i > 0 {
			u += ","
		}
		u += s.ClientURL()
	}
	return u
}

// WaitReady waits until every running member sees a JetStream meta leader
// and is caught up with it, and the leader has heard from every running
// member as a JetStream peer. A leader alone is not enough: until the
// leader has a member's statistics it does not count that member for
// placement, and a stream of R replicas created in that window is refused
// ("no suitable peers for placement") — CI saw that on a busy machine.
func (c *Cluster) WaitReady(d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		if c.ready() {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("natsrv: the cluster's JetStream is not ready after %v (a leader that counts every running member as a peer)", d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ready reports whether every running member is current with a meta
// leader that counts every running member as a peer.
func (c *Cluster) ready() bool {
	running, peers := 0, -1
	for _, s := range c.Servers {
		if s == nil || !s.s.Running() {
			continue
		}
		running++
		// Current: it knows the meta leader and is caught up with it.
		if !s.s.JetStreamIsClustered() || !s.s.JetStreamIsCurrent() {
			return false
		}
		if s.s.JetStreamIsLeader() {
			peers = len(s.s.JetStreamClusterPeers())
		}
	}
	return peers >= running
}

// Shutdown stops every member.
func (c *Cluster) Shutdown() {
	for _, s := range c.Servers {
		if s != nil {
			s.Shutdown()
		}
	}
}
