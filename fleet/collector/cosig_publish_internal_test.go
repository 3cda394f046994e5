package collector

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/opx-dev/opx/fleet/natsrv/natsrvtest"
)

// TestPublishPending_FailuresLoggedOnce: when the connection goes, every
// source's cosignature fails to publish at once; the collector says so in
// one line (with the count and the first), not a line per source, and
// keeps each one to publish again.
func TestPublishPending_FailuresLoggedOnce(t *testing.T) {
	srv := natsrvtest.Start(t)
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	nc.Close()
	var mu sync.Mutex
	var lines []string
	c := &Collector{js: js}
	c.cfg.Logf = func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, fmt.Sprintf(format, args...))
	}
	const n = 1000
	for i := range n {
		s := &source{id: fmt.Sprintf("src-%04d", i), cosigned: 7, cosigNote: []byte("note\n")}
		c.unpublished(s)
	}
	c.publishPending(context.Background())
	if len(lines) != 1 || !strings.Contains(lines[0], fmt.Sprintf("%d cosignatures failed", n)) {
		t.Fatalf("%d log lines, want one counting %d failures; first: %q", len(lines), n, lines[:min(1, len(lines))])
	}
	if len(c.toPublish) != n {
		t.Fatalf("%d cosignatures left to publish again, want %d", len(c.toPublish), n)
	}
}
