package collector_test

import (
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opx-dev/opx/fleet/collector"
)

// TestCollector_MissedHeartbeats_PullsAgain: the collector's connection
// to NATS stalls long enough for the consumer's heartbeats to be missed
// (a busy machine, a cluster electing a leader) and then flows again. The
// collector logs it and goes on: it mirrors what comes after. It used to
// end with "consumer: nats: no heartbeat received" (TestE2E_FleetCluster
// on a loaded machine: a collector gone, every later wait timing out).
func TestCollector_MissedHeartbeats_PullsAgain(t *testing.T) {
	srv := startServer(t)
	px := newStallProxy(t, srv.ClientURL())
	store := t.TempDir()
	p := newPub(t, srv.ClientURL())
	s := newSource(t, t.TempDir())
	s.notes(t, 4, true)
	p.hello(s.Ledger, "a")
	p.ship(s.Ledger, 0, s.head(t).Seq)

	var mu sync.Mutex
	var logs strings.Builder
	r := startCollector(t, px.url, store, func(c *collector.Config) {
		c.PullExpires = time.Second // heartbeats every 500 ms
		c.Logf = func(format string, args ...any) {
			t.Logf(format, args...)
			mu.Lock()
			defer mu.Unlock()
			logs.WriteString(strings.TrimSpace(format) + "\n")
		}
	})
	r.waitHead(t, s.ID(), s.head(t).Seq)

	px.stall()
	waitFor(t, "the collector to miss the heartbeats", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return strings.Contains(logs.String(), "(pulling again)")
	})
	px.flow()

	from := s.head(t).Seq + 1
	s.notes(t, 3, true)
	p.ship(s.Ledger, from, s.head(t).Seq)
	r.waitHead(t, s.ID(), s.head(t).Seq)
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	if a := r.alerts(t, ""); len(a) != 0 {
		t.Fatalf("alerts: %s", details(a))
	}
	sameEntries(t, store, s.Ledger)
}

// stallProxy forwards TCP connections to a NATS server and can hold
// every byte in both directions until told to flow again.
type stallProxy struct {
	url     string
	mu      sync.Mutex
	cond    *sync.Cond
	stalled bool
}

func newStallProxy(t *testing.T, target string) *stallProxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	px := &stallProxy{url: "nats://" + ln.Addr().String()}
	px.cond = sync.NewCond(&px.mu)
	var conns sync.WaitGroup
	t.Cleanup(func() {
		ln.Close()
		px.flow()
		conns.Wait()
	})
	var open []net.Conn
	var openMu sync.Mutex
	t.Cleanup(func() {
		openMu.Lock()
		defer openMu.Unlock()
		for _, c := range open {
			c.Close()
		}
	})
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", u.Host)
			if err != nil {
				in.Close()
				continue
			}
			openMu.Lock()
			open = append(open, in, out)
			openMu.Unlock()
			conns.Add(2)
			go func() { defer conns.Done(); px.copy(out, in); out.Close() }()
			go func() { defer conns.Done(); px.copy(in, out); in.Close() }()
		}
	}()
	return px
}

// copy forwards src to dst, holding what it read while stalled.
func (px *stallProxy) copy(dst io.Writer, src io.Reader) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			px.mu.Lock()
			for px.stalled {
				px.cond.Wait()
			}
			px.mu.Unlock()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (px *stallProxy) stall() {
	px.mu.Lock()
	defer px.mu.Unlock()
	px.stalled = true
}

func (px *stallProxy) flow() {
	px.mu.Lock()
	defer px.mu.Unlock()
	px.stalled = false
	px.cond.Broadcast()
}
