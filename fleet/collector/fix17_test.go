package collector_test

// Fixes of review 17 (REVIEW17.md) on the collector's side.

import (
	"strings"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/opx-dev/opx/fleet"
	"github.com/opx-dev/opx/fleet/collector"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// conflicting publishes entries from..to of l as a shipper does that
// found other bytes stored under their EntryMsgID: under ConflictMsgID.
func (p *pub) conflicting(s *src, from, to uint64) {
	p.t.Helper()
	for seq := from; seq <= to; seq++ {
		e, err := s.Get(seq)
		if err != nil {
			p.t.Fatal(err)
		}
		ms := fleet.EntryMessages(prefix, s.ID(), seq, e.Raw)
		ms[len(ms)-1].Header.Set(nats.MsgIdHdr, fleet.ConflictMsgID(s.ID(), seq, e.Raw))
		for _, m := range ms {
			p.must(m)
		}
	}
}

// Review 17 #1, the collector's side: an entry published under its
// ConflictMsgID whose seq the mirror holds with other bytes is a fork
// (another history under the ledger id), even when it is no signed
// checkpoint; one with the mirror's bytes is nothing.
func TestCollector_ConflictMsgIDIsAFork(t *testing.T) {
	srv := startServer(t)
	store := t.TempDir()
	p := newPub(t, srv.ClientURL())
	a := newSource(t, t.TempDir())
	a.notes(t, 3, false)
	b := fork(t, a)
	base := a.head(t).Seq
	a.notes(t, 4, false)
	b.notes(t, 4, false)
	r := startCollector(t, srv.ClientURL(), store)
	// B's history got onto the stream first.
	p.ship(b.Ledger, 0, b.head(t).Seq)
	r.waitHead(t, b.ID(), b.head(t).Seq)
	// A's shipper found B's bytes under its ids: conflict ids. The
	// shared prefix, sent the same way, is no alert.
	p.conflicting(a, 1, a.head(t).Seq)
	marker(t, r, p)
	forks := map[uint64]bool{}
	for _, al := range r.alerts(t, "") {
		if al.Source != a.ID() {
			continue
		}
		if al.Kind != event.AlertFork {
			t.Errorf("alert %s at %d: %s", al.Kind, al.SourceSeq, al.Detail)
		}
		forks[al.SourceSeq] = true
	}
	for seq := base + 1; seq <= a.head(t).Seq; seq++ {
		if !forks[seq] {
			t.Errorf("no fork alert for entry %d", seq)
		}
	}
	for seq := uint64(1); seq <= base; seq++ {
		if forks[seq] {
			t.Errorf("a fork alert for the shared entry %d", seq)
		}
	}
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	sameEntries(t, store, b.Ledger)
}

// Review 17 #9: what a source's hello said and when it was last heard
// from survive a collector restart (a source that does not come back
// still shows its host and workspace); #6: the texts of a hello are kept
// (and written in the status) clipped.
func TestCollector_HelloAndLastSeenSurviveRestart(t *testing.T) {
	srv := startServer(t)
	store := t.TempDir()
	p := newPub(t, srv.ClientURL())
	s := newSource(t, t.TempDir())
	s.notes(t, 2, false)
	r := startCollector(t, srv.ClientURL(), store)
	h, err := s.Head()
	if err != nil {
		t.Fatal(err)
	}
	m, err := fleet.HelloMessage(prefix, fleet.Hello{LedgerID: s.ID(), Boot: "b9", Host: "host-9",
		Workspace: strings.Repeat("w", fleet.MaxHelloBytes/2), HeadSeq: h.Seq, HeadHash: h.Hash.String()})
	if err != nil {
		t.Fatal(err)
	}
	p.must(m)
	p.ship(s.Ledger, 0, h.Seq)
	r.waitHead(t, s.ID(), h.Seq)
	before := r.source(t, s.ID())
	if len(before.Workspace) > 300 {
		t.Errorf("a workspace of %d bytes kept as is", len(before.Workspace))
	}
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	r = startCollector(t, srv.ClientURL(), store)
	var after *collector.SourceStatus
	waitFor(t, "the restarted collector's status", func() bool {
		after = r.source(t, s.ID())
		return after != nil && after.HasMirror
	})
	if after.Host != "host-9" || after.Boot != "b9" || after.Workspace != before.Workspace || after.LastSeen != before.LastSeen {
		t.Errorf("after a restart: host %q boot %q last seen %q (before: %q %q %q)", after.Host, after.Boot, after.LastSeen, before.Host, before.Boot, before.LastSeen)
	}
}

// Review 17 #8: after a restart the status's checkpoint is one the
// collector verified, not merely the latest checkpoint entry its mirror
// holds (here one signed by another key, a bad signature).
func TestCollector_RestartShowsOnlyVerifiedCheckpoint(t *testing.T) {
	srv := startServer(t)
	store := t.TempDir()
	p := newPub(t, srv.ClientURL())
	a := newSource(t, t.TempDir())
	a.notes(t, 3, true)
	good := a.head(t).Seq
	r := startCollector(t, srv.ClientURL(), store)
	p.ship(a.Ledger, 0, good)
	waitFor(t, "the cosignature", func() bool { s := r.source(t, a.ID()); return s != nil && s.Cosigned == good })
	other := keyOf(t, a.ID())
	a.Close()
	l, err := ledger.Open(a.path, ledger.Options{NoSync: true, SignCheckpoint: func(th ledger.TreeHead) (string, error) {
		return other.Sign(th.Size, th.Root)
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	a.Ledger = l
	a.notes(t, 2, true)
	forged := a.head(t).Seq
	p.ship(a.Ledger, good+1, forged)
	r.waitAlert(t, event.AlertBadSignature)
	r.waitHead(t, a.ID(), forged)
	if s := r.source(t, a.ID()); s.Checkpoint != good {
		t.Fatalf("checkpoint %d before the restart, want %d", s.Checkpoint, good)
	}
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	r = startCollector(t, srv.ClientURL(), store)
	var s *collector.SourceStatus
	waitFor(t, "the restarted collector's status", func() bool { s = r.source(t, a.ID()); return s != nil && s.HasMirror })
	if s.Checkpoint != good || s.Cosigned != good {
		t.Errorf("after a restart: checkpoint %d, cosigned %d; only %d was verified (%d is signed by another key)", s.Checkpoint, s.Cosigned, good, forged)
	}
}
