package collector

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// progressMsg is a deferred message that counts the in-progress reports
// it was given.
type progressMsg struct {
	jetstream.Msg
	reports int
}

func (m *progressMsg) InProgress() error { m.reports++; return nil }
func (m *progressMsg) Data() []byte      { return []byte("entry") }

// TestDeferred_KeepAlive: deferred messages are reported in progress
// once per period while they wait (so JetStream does not deliver them
// again after its ack wait), never while none waits, and the period
// starts again when the deferral does.
func TestDeferred_KeepAlive(t *testing.T) {
	const every = 10 * time.Second
	t0 := time.Unix(1_000_000, 0)
	var d deferred
	d.keepAlive(t0, every) // nothing deferred
	a, b := &progressMsg{}, &progressMsg{}
	d.push("src-a", a)
	d.push("src-b", b)
	d.keepAlive(t0.Add(time.Second), every) // the period starts
	d.keepAlive(t0.Add(10*time.Second), every)
	if a.reports != 0 || b.reports != 0 {
		t.Fatalf("reported before a period passed: %d %d", a.reports, b.reports)
	}
	d.keepAlive(t0.Add(11*time.Second), every)
	if a.reports != 1 || b.reports != 1 {
		t.Fatalf("after a period: %d %d reports, want 1 each", a.reports, b.reports)
	}
	d.keepAlive(t0.Add(15*time.Second), every)
	d.keepAlive(t0.Add(21*time.Second), every)
	if a.reports != 2 || b.reports != 2 {
		t.Fatalf("after two periods: %d %d reports, want 2 each", a.reports, b.reports)
	}
	// Drained: nothing is reported, and a new deferral waits a whole
	// period again.
	delete(d.q, "src-a")
	delete(d.q, "src-b")
	d.order, d.n, d.bytes = nil, 0, 0 // as drainDeferred leaves it
	d.keepAlive(t0.Add(40*time.Second), every)
	c := &progressMsg{}
	d.push("src-c", c)
	d.keepAlive(t0.Add(41*time.Second), every)
	d.keepAlive(t0.Add(50*time.Second), every)
	if c.reports != 0 {
		t.Fatalf("a new deferral reported before its period: %d", c.reports)
	}
	d.keepAlive(t0.Add(51*time.Second), every)
	if c.reports != 1 || a.reports != 2 {
		t.Fatalf("reports %d (new) %d (drained), want 1 and 2", c.reports, a.reports)
	}
}

// TestHeld_KeepAlive: the messages a source holds unacknowledged (an
// entry in its reorder buffer, the parts of an entry, a blob before its
// genesis) are reported in progress once per period since they came, so
// JetStream does not deliver them again after its ack wait while they
// wait for an earlier entry; never before a period passed.
func TestHeld_KeepAlive(t *testing.T) {
	const every = 10 * time.Second
	t0 := time.Unix(1_000_000, 0)
	c := &Collector{sources: map[string]*source{}}
	s := c.source("src-a")
	entry, part, blob := &progressMsg{}, &progressMsg{}, &progressMsg{}
	s.held[7] = &heldEntry{raw: []byte("entry"), msgs: []jetstream.Msg{entry}, at: t0}
	s.parts["e9"] = &assembly{msgs: []jetstream.Msg{part}, at: t0.Add(5 * time.Second)}
	s.blobs = append(s.blobs, heldBlob{msgs: []jetstream.Msg{blob}, at: t0})
	c.source("src-idle") // holds nothing

	c.keepAlive(t0.Add(9*time.Second), every)
	if entry.reports+part.reports+blob.reports != 0 {
		t.Fatalf("reported before a period: %d %d %d", entry.reports, part.reports, blob.reports)
	}
	c.keepAlive(t0.Add(10*time.Second), every)
	if entry.reports != 1 || blob.reports != 1 || part.reports != 0 {
		t.Fatalf("after a period of the entry and blob (not the part): %d %d %d reports, want 1 1 0", entry.reports, blob.reports, part.reports)
	}
	c.keepAlive(t0.Add(15*time.Second), every)
	if entry.reports != 1 || part.reports != 1 {
		t.Fatalf("after the part's period: %d %d reports, want 1 1", entry.reports, part.reports)
	}
	// Held past the ack wait (30 s), each was reported within every
	// period of it.
	for sec := 16; sec <= 45; sec++ {
		c.keepAlive(t0.Add(time.Duration(sec)*time.Second), every)
	}
	if entry.reports != 4 || blob.reports != 4 || part.reports != 4 {
		t.Fatalf("after 45 s: %d %d %d reports, want 4 each", entry.reports, blob.reports, part.reports)
	}
}
