package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/opx-dev/opx/fleet"
	"github.com/opx-dev/opx/fleet/natsrv/natsrvtest"
)

// TestWitnessScan_MissedHeartbeats_GoesOn: the connection verify
// --witness reads the cosignature stream on stalls mid-scan, long
// enough for the pull's heartbeats to be missed (a busy server, a
// cluster electing a leader), then flows again. The scan goes on after
// the last cosignature it read and reads them all: nats.go's ordered
// consumer (v1.55) creates its consumer again after missed heartbeats
// rather than handing ErrNoHeartbeat to Next's caller, and this keeps
// the command relying on it.
func TestWitnessScan_MissedHeartbeats_GoesOn(t *testing.T) {
	srv := natsrvtest.Start(t)
	const prefix, id, n = "opx", "0123456789abcdef0123456789abcdef", 5
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := fleet.EnsureStreams(ctx, js, prefix, 1); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= n; i++ {
		if _, err := js.PublishMsg(ctx, fleet.CosigMessage(prefix, id, uint64(i), []byte(fmt.Sprintf("note %d\n", i)))); err != nil {
			t.Fatal(err)
		}
	}

	px := newScanProxy(t, srv.ClientURL())
	r := &natsRef{url: px.url, prefix: prefix,
		// One message per pull, heartbeats every 500 ms: a stall after
		// the first message is seen by the next pull.
		pull: []jetstream.PullMessagesOpt{jetstream.PullMaxMessages(1), jetstream.PullExpiry(time.Second), jetstream.PullHeartbeat(500 * time.Millisecond)},
		read: func(got int) {
			if got == 1 {
				px.stall()
			}
		},
	}
	type result struct {
		n   int
		err error
	}
	done := make(chan result, 1)
	go func() {
		got, _, err := r.scan(id, func([]byte) {})
		done <- result{got, err}
	}()
	// The consumer is created again once the heartbeats were missed:
	// the stream flows again once that request is held by the stall.
	select {
	case <-px.reset:
	case res := <-done:
		t.Fatalf("the scan ended during the stall: %d read, %v", res.n, res.err)
	case <-time.After(time.Minute):
		t.Fatal("the stalled scan never asked for its consumer again")
	}
	px.flow()
	res := <-done
	if res.err != nil || res.n != n {
		t.Fatalf("scan after the stall: %d of %d read, %v", res.n, n, res.err)
	}
}

// scanProxy forwards TCP connections to a NATS server and can hold
// every byte in both directions until told to flow again; reset is
// closed once a consumer is created while it holds.
type scanProxy struct {
	url       string
	mu        sync.Mutex
	cond      *sync.Cond
	stalled   bool
	reset     chan struct{}
	resetOnce sync.Once
}

func newScanProxy(t *testing.T, target string) *scanProxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	px := &scanProxy{url: "nats://" + ln.Addr().String(), reset: make(chan struct{})}
	px.cond = sync.NewCond(&px.mu)
	var conns sync.WaitGroup
	var open []net.Conn
	var openMu sync.Mutex
	t.Cleanup(func() {
		ln.Close()
		px.flow()
		openMu.Lock()
		for _, c := range open {
			c.Close()
		}
		openMu.Unlock()
		conns.Wait()
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
			go func() { defer conns.Done(); px.copy(out, in, true); out.Close() }()
			go func() { defer conns.Done(); px.copy(in, out, false); in.Close() }()
		}
	}()
	return px
}

// copy forwards src to dst: what it reads while stalled is held, in
// order, and written once the proxy flows again.
func (px *scanProxy) copy(dst io.Writer, src io.Reader, client bool) {
	var held [][]byte
	eof := false
	go func() {
		buf := make([]byte, 32<<10)
		for {
			n, err := src.Read(buf)
			px.mu.Lock()
			if n > 0 {
				held = append(held, bytes.Clone(buf[:n]))
				if px.stalled && client && bytes.Contains(buf[:n], []byte("CONSUMER.CREATE")) {
					px.resetOnce.Do(func() { close(px.reset) })
				}
			}
			eof = eof || err != nil
			px.cond.Broadcast()
			px.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	for {
		px.mu.Lock()
		for px.stalled || (len(held) == 0 && !eof) {
			px.cond.Wait()
		}
		chunks, end := held, eof
		held = nil
		px.mu.Unlock()
		for _, c := range chunks {
			if _, err := dst.Write(c); err != nil {
				return
			}
		}
		if end {
			return
		}
	}
}

func (px *scanProxy) stall() {
	px.mu.Lock()
	defer px.mu.Unlock()
	px.stalled = true
}

func (px *scanProxy) flow() {
	px.mu.Lock()
	defer px.mu.Unlock()
	px.stalled = false
	px.cond.Broadcast()
}
