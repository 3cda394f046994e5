package collector_test

// Fixes of review 17 (REVIEW17.md) on the collector's side.

import (
	"fmt"
	"strings"
	"testing"
	"time"

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

// resends listens to a source's control subject.
func resends(t *testing.T, url, id string) chan fleet.ResendRequest {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	ch := make(chan fleet.ResendRequest, 16)
	_, err = nc.Subscribe(fleet.CtlSubject(prefix, id), func(m *nats.Msg) {
		r, err := fleet.ParseResend(prefix, id, m)
		if err != nil {
			t.Errorf("a resend request that does not parse: %v", err)
			return
		}
		ch <- r
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return ch
}

func nextResend(t *testing.T, ch chan fleet.ResendRequest) fleet.ResendRequest {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(20 * time.Second):
		t.Fatal("no resend request")
	}
	return fleet.ResendRequest{}
}

// resend publishes entries from..to of l (and their blobs) as a shipper
// honouring r does: under ResendMsgID ids.
func (p *pub) resend(l *ledger.Ledger, r fleet.ResendRequest, to uint64) {
	p.t.Helper()
	for seq := r.From; seq <= to; seq++ {
		e, err := l.Get(seq)
		if err != nil {
			p.t.Fatal(err)
		}
		refs, _ := ledger.BlobRefs(e.Data)
		for _, h := range refs {
			f, err := l.BlobFrame(h)
			if err != nil {
				p.t.Fatal(err)
			}
			for i := 0; i < fleet.BlobParts(int64(len(f))); i++ {
				m := fleet.BlobMessage(prefix, l.ID(), h, int64(len(f)), i, f[i*fleet.MaxChunk:min(len(f), (i+1)*fleet.MaxChunk)])
				m.Header.Set(nats.MsgIdHdr, fleet.ResendMsgID(m.Header.Get(nats.MsgIdHdr), r.Epoch))
				p.must(m)
			}
		}
		for _, m := range fleet.EntryMessages(prefix, l.ID(), seq, e.Raw) {
			m.Header.Set(nats.MsgIdHdr, fleet.ResendMsgID(m.Header.Get(nats.MsgIdHdr), r.Epoch))
			p.must(m)
		}
	}
}

// Review 17 #4: a missing entry makes the collector ask the source to
// resend from it (at most once per fleet.ResendEvery), and what is
// resent fills the mirror, the entries held beyond the hole too; a
// mirror behind the head its source's hello named is asked the same,
// from its genesis when it has none (a stream that no longer holds it).
func TestCollector_AsksForResend(t *testing.T) {
	srv := startServer(t)
	store := t.TempDir()
	p := newPub(t, srv.ClientURL())
	s := newSource(t, t.TempDir())
	s.notes(t, 9, false)
	head := s.head(t).Seq
	ch := resends(t, srv.ClientURL(), s.ID())
	r := startCollector(t, srv.ClientURL(), store, func(c *collector.Config) { c.ResendAfter = 200 * time.Millisecond })
	p.ship(s.Ledger, 0, 3)
	p.ship(s.Ledger, 6, head) // 4 and 5 never made it to the stream
	req := nextResend(t, ch)
	if req.From != 4 || req.LedgerID != s.ID() {
		t.Fatalf("resend request %+v, want from 4", req)
	}
	p.resend(s.Ledger, req, head)
	r.waitHead(t, s.ID(), head)
	if src := r.source(t, s.ID()); src.Resends != 1 || src.ResendFrom != 4 {
		t.Errorf("status: %d resends, from %d", src.Resends, src.ResendFrom)
	}
	select {
	case extra := <-ch:
		t.Errorf("a second request within fleet.ResendEvery: %+v", extra)
	default:
	}
	if a := r.alerts(t, ""); len(a) != 0 {
		t.Errorf("alerts: %s", details(a))
	}

	// A source whose genesis the stream no longer holds: its hello
	// names a head, nothing of it comes, it is asked from 0.
	o := newSource(t, t.TempDir())
	o.notes(t, 2, false)
	cho := resends(t, srv.ClientURL(), o.ID())
	p.hello(o.Ledger, "o")
	req = nextResend(t, cho)
	if req.From != 0 {
		t.Fatalf("resend request %+v, want from 0", req)
	}
	p.resend(o.Ledger, req, o.head(t).Seq)
	r.waitHead(t, o.ID(), o.head(t).Seq)
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	sameEntries(t, store, s.Ledger)
	sameEntries(t, store, o.Ledger)
}

// Review 17 #6: the collector takes at most MaxSources sources; messages
// of one more are dropped with one too-many alert per period, counted in
// the status, and the sources it has go on.
func TestCollector_MaxSources(t *testing.T) {
	srv := startServer(t)
	store := t.TempDir()
	p := newPub(t, srv.ClientURL())
	s := newSource(t, t.TempDir())
	s.notes(t, 2, false)
	r := startCollector(t, srv.ClientURL(), store, func(c *collector.Config) { c.MaxSources = 3 })
	p.ship(s.Ledger, 0, 1)
	r.waitHead(t, s.ID(), 1)
	for i := range 10 {
		m, err := fleet.HelloMessage(prefix, fleet.Hello{LedgerID: fmt.Sprintf("%032x", i+1), Boot: "b", Host: "h"})
		if err != nil {
			t.Fatal(err)
		}
		p.must(m)
	}
	p.ship(s.Ledger, 2, s.head(t).Seq)
	r.waitHead(t, s.ID(), s.head(t).Seq)
	st := r.status(t)
	if len(st.Sources) != 3 || st.MaxSources != 3 || st.RefusedMessages != 8 {
		t.Errorf("%d sources (max %d), %d messages refused; want 3, 3, 8", len(st.Sources), st.MaxSources, st.RefusedMessages)
	}
	if got := r.alerts(t, event.AlertTooMany); len(got) != 1 {
		t.Errorf("too-many alerts: %s", details(got))
	}
}

// An entry in parts sent again with other bytes in only some of its
// parts is a rewrite (a fork under conflict ids), not a part assembly
// that never completes and turns into a gap.
func TestCollector_PartsResentWithOtherBytes(t *testing.T) {
	srv := startServer(t)
	store := t.TempDir()
	p := newPub(t, srv.ClientURL())
	s := newSource(t, t.TempDir())
	note := &event.Note{Author: "t", Text: strings.Repeat("long ", fleet.MaxChunk/4)}
	app, err := s.Append(t.Context(), ledger.Sync, event.MustRecord("", note))
	if err != nil {
		t.Fatal(err)
	}
	seq := app[0].Seq
	s.notes(t, 1, false)
	r := startCollector(t, srv.ClientURL(), store)
	p.ship(s.Ledger, 0, s.head(t).Seq)
	r.waitHead(t, s.ID(), s.head(t).Seq)
	e, _ := s.Get(seq)
	other := []byte(string(e.Raw))
	i := strings.LastIndex(string(other), "long")
	copy(other[i:], "lone") // only the last part differs
	send := func(conflict bool) {
		ms := fleet.EntryMessages(prefix, s.ID(), seq, other)
		if len(ms) < 2 {
			t.Fatal("the test needs an entry in parts")
		}
		for j, m := range ms {
			id := fmt.Sprintf("rewrite/%d", j)
			if conflict {
				id = fleet.ConflictMsgID(s.ID(), seq, other)
				if j < len(ms)-1 {
					id += fmt.Sprintf("/%d", j)
				}
			}
			m.Header.Set(nats.MsgIdHdr, id)
			p.must(m)
		}
	}
	send(false)
	r.waitAlert(t, event.AlertRewrite)
	send(true)
	r.waitAlert(t, event.AlertFork)
	marker(t, r, p)
	for _, al := range r.alerts(t, "") {
		if al.Source == s.ID() && al.Kind != event.AlertRewrite && al.Kind != event.AlertFork {
			t.Errorf("alert %s at %d: %s", al.Kind, al.SourceSeq, al.Detail)
		}
	}
	if src := r.source(t, s.ID()); src.Held != 0 {
		t.Errorf("%d held", src.Held)
	}
}

// A forged blob published first under the real blob's message id keeps
// the real one away (the duplicate window): a bad-blob alert, and the
// source is asked to resend from the entry that names it, which brings
// the real blob under fresh ids.
func TestCollector_BadBlobAsksForResend(t *testing.T) {
	srv := startServer(t)
	store := t.TempDir()
	p := newPub(t, srv.ClientURL())
	s := newSource(t, t.TempDir())
	s.notes(t, 2, false)
	content := []byte("the real attachment")
	app, err := s.Append(t.Context(), ledger.Sync, event.MustRecord("", &event.Note{Author: "t", Text: "att", Attachment: "a.txt", Blob: ledger.Sum(content).String()}, content))
	if err != nil {
		t.Fatal(err)
	}
	seq := app[0].Seq
	s.notes(t, 1, false)
	ch := resends(t, srv.ClientURL(), s.ID())
	r := startCollector(t, srv.ClientURL(), store)
	f, err := s.BlobFrame(ledger.Sum(content))
	if err != nil {
		t.Fatal(err)
	}
	junk := []byte(strings.Repeat("x", len(f)))
	p.ship(s.Ledger, 0, seq-1)
	p.must(fleet.BlobMessage(prefix, s.ID(), ledger.Sum(content), int64(len(junk)), 0, junk)) // the squatter
	p.ship(s.Ledger, seq, s.head(t).Seq)                                                      // the real blob is dropped as a duplicate
	r.waitAlert(t, event.AlertBadBlob)
	req := nextResend(t, ch)
	if req.From != seq {
		t.Fatalf("resend request %+v, want from %d", req, seq)
	}
	p.resend(s.Ledger, req, s.head(t).Seq)
	r.waitHead(t, s.ID(), s.head(t).Seq)
	marker(t, r, p)
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	sameEntries(t, store, s.Ledger)
	m, err := ledger.OpenReadOnly(collector.SourcePath(store, s.ID()))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if ok, _ := m.HasBlob(ledger.Sum(content)); !ok {
		t.Error("the mirror lacks the real blob")
	}
}
