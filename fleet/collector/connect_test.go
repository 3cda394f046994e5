package collector_test

import (
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opx-dev/opx/fleet/collector"
	"github.com/opx-dev/opx/fleet/natsrv"
)

// A collector started before its NATS server (or whose first handshake
// timed out on a busy machine: CI saw "connect …: i/o timeout" end a
// collector, and the test waiting for its entries) waits for the server
// and then collects as usual. Without connect's retries Run returned at
// once and the source never arrived.
func TestCollector_WaitsForItsServer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close() // nobody listens there until the server below starts
	url := fmt.Sprintf("nats://127.0.0.1:%d", port)

	retrying := make(chan struct{})
	var once sync.Once
	store := t.TempDir()
	r := startCollector(t, url, store, func(cfg *collector.Config) {
		cfg.Logf = func(format string, args ...any) {
			line := fmt.Sprintf(format, args...)
			if strings.Contains(line, "trying again") {
				once.Do(func() { close(retrying) })
			}
			t.Log(line)
		}
	})
	select { // a deadline, as waitFor's, not a sleep
	case <-retrying:
	case <-time.After(60 * time.Second):
		t.Fatal("the collector did not try its server again")
	}

	srv, err := natsrv.Start(natsrv.Options{Dir: t.TempDir(), Port: port})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	p := newPub(t, srv.ClientURL())
	s := newSource(t, t.TempDir())
	s.notes(t, 5, true)
	p.ship(s.Ledger, 0, s.head(t).Seq)
	r.waitHead(t, s.ID(), s.head(t).Seq)
}
