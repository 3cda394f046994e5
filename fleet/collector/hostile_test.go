package collector_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/opx-dev/opx/fleet"
	"github.com/opx-dev/opx/fleet/collector"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// Hostile messages on a source's subject (invariant 9): each is refused
// with an alert, acknowledged, and changes nothing the collector holds;
// the honest source beside them is mirrored whole, without an alert.
func TestCollector_HostileMessages(t *testing.T) {
	srv := startServer(t)
	store := t.TempDir()
	p := newPub(t, srv.ClientURL())
	honest := newSource(t, t.TempDir())
	honest.notes(t, 6, true)
	victim := newSource(t, t.TempDir())
	victim.notes(t, 3, true)
	r := startCollector(t, srv.ClientURL(), store)
	p.ship(victim.Ledger, 0, victim.head(t).Seq)
	r.waitHead(t, victim.ID(), victim.head(t).Seq)

	id := victim.ID()
	next := victim.head(t).Seq + 1
	subject := fleet.LedgerSubject(prefix, id)
	msg := func(hdr map[string]string, data []byte) *nats.Msg {
		m := nats.NewMsg(subject)
		for k, v := range hdr {
			m.Header.Set(k, v)
		}
		m.Data = data
		return m
	}
	entryHdr := func(seq uint64, size, part string) map[string]string {
		return map[string]string{fleet.HdrWire: fleet.WireVersion, fleet.HdrKind: "entry", fleet.HdrSeq: fmt.Sprint(seq),
			fleet.HdrSize: size, fleet.HdrPart: part}
	}
	nextRaw := func() []byte { // a well-formed entry that chains
		victim.notes(t, 1, false)
		e, err := victim.Get(victim.head(t).Seq)
		if err != nil {
			t.Fatal(err)
		}
		return e.Raw
	}
	good := nextRaw()
	content := []byte("the content of a blob")
	wrongFrame, _ := func() ([]byte, error) { // a valid frame of other content
		l := newSource(t, t.TempDir())
		p := &event.Note{Author: "t", Text: "x", Attachment: "a", Blob: ledger.Sum([]byte("other content")).String()}
		if _, err := l.Append(t.Context(), ledger.Sync, event.MustRecord("", p, []byte("other content"))); err != nil {
			t.Fatal(err)
		}
		return l.BlobFrame(ledger.Sum([]byte("other content")))
	}()
	forgedGenesis := raws(t, honest.Ledger, 0, 0)[0] // on another ledger's subject

	cases := []struct {
		name string
		m    *nats.Msg
		kind string
	}{
		{"no headers", msg(nil, []byte("junk")), event.AlertMalformed},
		{"other wire", msg(map[string]string{fleet.HdrWire: "opx-fleet/99", fleet.HdrKind: "entry"}, good), event.AlertMalformed},
		{"unknown kind", msg(map[string]string{fleet.HdrWire: fleet.WireVersion, fleet.HdrKind: "exec"}, good), event.AlertMalformed},
		{"header too long", msg(map[string]string{fleet.HdrWire: fleet.WireVersion + strings.Repeat("x", 300)}, good), event.AlertMalformed},
		{"size not a number", msg(entryHdr(next, "-1", "0/1"), good), event.AlertMalformed},
		{"size not the body's", msg(entryHdr(next, fmt.Sprint(len(good)+1), "0/1"), good), event.AlertMalformed},
		{"part out of range", msg(entryHdr(next, fmt.Sprint(len(good)), "3/1"), good), event.AlertMalformed},
		{"parts not the size's", msg(entryHdr(next, fmt.Sprint(len(good)), "0/7"), good), event.AlertMalformed},
		{"part junk", msg(entryHdr(next, fmt.Sprint(len(good)), "a/b"), good), event.AlertMalformed},
		{"seq junk", msg(map[string]string{fleet.HdrWire: fleet.WireVersion, fleet.HdrKind: "entry", fleet.HdrSeq: "x",
			fleet.HdrSize: fmt.Sprint(len(good)), fleet.HdrPart: "0/1"}, good), event.AlertMalformed},
		{"entry not JSON", msg(entryHdr(next, "9", "0/1"), []byte("{not json")), event.AlertMalformed},
		{"entry of another seq", msg(entryHdr(next, fmt.Sprint(len(good)), "0/1"), raws(t, victim.Ledger, 2, 2)[0]), event.AlertMalformed},
		{"hello of another ledger", func() *nats.Msg {
			m, _ := fleet.HelloMessage(prefix, fleet.Hello{LedgerID: honest.ID(), Boot: "x"})
			m.Subject = subject
			return m
		}(), event.AlertMalformed},
		{"hello too large", msg(map[string]string{fleet.HdrWire: fleet.WireVersion, fleet.HdrKind: "hello"},
			[]byte(`{"wire":"opx-fleet/1","ledger_id":"`+id+`","host":"`+strings.Repeat("h", fleet.MaxHelloBytes)+`"}`)), event.AlertMalformed},
		{"hello not JSON", msg(map[string]string{fleet.HdrWire: fleet.WireVersion, fleet.HdrKind: "hello"}, []byte("\xff\xfe")), event.AlertMalformed},
		{"blob of other content", fleet.BlobMessage(prefix, id, ledger.Sum(content), int64(len(wrongFrame)), 0, wrongFrame), event.AlertBadBlob},
		{"blob not zstd", fleet.BlobMessage(prefix, id, ledger.Sum([]byte("x")), int64(len(content)), 0, content), event.AlertBadBlob},
		{"blob hash junk", msg(map[string]string{fleet.HdrWire: fleet.WireVersion, fleet.HdrKind: "blob", fleet.HdrBlob: "zz",
			fleet.HdrSize: "4", fleet.HdrPart: "0/1"}, []byte("abcd")), event.AlertMalformed},
		{"a genesis naming another ledger", func() *nats.Msg {
			ms := fleet.EntryMessages(prefix, strings.Repeat("ab", 16), 0, forgedGenesis)
			return ms[0]
		}(), event.AlertMalformed},
	}
	for _, c := range cases {
		before := len(r.alerts(t, c.kind))
		if err := p.msg(c.m); err != nil {
			t.Fatalf("%s: publish: %v", c.name, err)
		}
		waitFor(t, c.name+": a "+c.kind+" alert", func() bool { return len(r.alerts(t, c.kind)) > before })
	}
	// Other subjects under the prefix, and a body larger than a part:
	// the server refuses the body; the subject is an alert of source "-".
	if err := p.msg(&nats.Msg{Subject: prefix + ".ledger.NOT-AN-ID", Header: nats.Header{fleet.HdrWire: {fleet.WireVersion}}, Data: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "an alert for a subject that names no ledger", func() bool {
		for _, a := range r.alerts(t, event.AlertMalformed) {
			if a.Source == "-" {
				return true
			}
		}
		return false
	})
	if err := p.msg(msg(entryHdr(next, fmt.Sprint(fleet.MaxChunk+8192), "0/2"), make([]byte, fleet.MaxChunk+8192))); err == nil {
		t.Fatal("the stream took a message over its size limit")
	}

	// After all that, the victim's next entry (published before, never
	// taken) and the honest source go through untouched.
	p.must(fleet.EntryMessages(prefix, id, next, good)[0])
	r.waitHead(t, id, next)
	p.hello(honest.Ledger, "h")
	p.ship(honest.Ledger, 0, honest.head(t).Seq)
	r.waitHead(t, honest.ID(), honest.head(t).Seq)
	for _, a := range r.alerts(t, "") {
		if a.Source == honest.ID() {
			t.Errorf("alert on the honest source: %+v", a)
		}
	}
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	sameEntries(t, store, honest.Ledger)
	sameEntries(t, store, victim.Ledger)
}

// A part that never completes, an entry that never comes: held within
// bounds and given up as a gap; a duplicate with equal bytes is
// harmless; a source that stops is stalled; one whose hello names a head
// behind what it shipped rewound.
func TestCollector_GapStallRewind(t *testing.T) {
	srv := startServer(t)
	store := t.TempDir()
	p := newPub(t, srv.ClientURL())
	s := newSource(t, t.TempDir())
	s.notes(t, collector.ReorderEntries+8, false)
	r := startCollector(t, srv.ClientURL(), store, func(c *collector.Config) { c.StallAfter = 300 * time.Millisecond })
	p.ship(s.Ledger, 0, 5)
	r.waitHead(t, s.ID(), 5)
	// 6 is missing; 7 on come in order and wait for it, until the
	// buffer is full.
	p.ship(s.Ledger, 7, uint64(7+collector.ReorderEntries))
	got := r.waitAlert(t, event.AlertGap)
	if !contains(got, event.AlertGap, 6) {
		t.Fatalf("alerts %s", details(got))
	}
	if src := r.source(t, s.ID()); src.Held > collector.ReorderEntries || src.HeadSeq != 5 {
		t.Fatalf("held %d, head %d", src.Held, src.HeadSeq)
	}
	// A resend of an entry it holds, same bytes, past the duplicate
	// window (another id): nothing.
	e, _ := s.Get(3)
	m := fleet.EntryMessages(prefix, s.ID(), 3, e.Raw)[0]
	m.Header.Set(fleet.HdrMsgID, "again")
	p.must(m)
	// Entry 6 arrives at last: the mirror goes on from it.
	p.ship(s.Ledger, 6, 6)
	r.waitHead(t, s.ID(), 6)
	r.waitAlert(t, event.AlertStalled)
	// A hello that says the head is 4.
	h4, _ := s.Get(4)
	hm, _ := fleet.HelloMessage(prefix, fleet.Hello{LedgerID: s.ID(), Boot: "late", HeadSeq: 4, HeadHash: h4.Hash().String()})
	p.must(hm)
	r.waitAlert(t, event.AlertRewind)
	for _, a := range r.alerts(t, "") {
		if a.Kind != event.AlertGap && a.Kind != event.AlertStalled && a.Kind != event.AlertRewind {
			t.Errorf("unexpected alert %+v", a)
		}
	}
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	// The alerts are in the collector's ledger, read with the collector
	// stopped.
	st, _ := collector.OpenStore(store)
	all, err := st.Alerts()
	if err != nil || !contains(all, event.AlertGap, 6) || !contains(all, event.AlertRewind, 4) {
		t.Fatalf("alerts from the ledger: %+v %v", all, err)
	}
}

// Entries and blobs larger than a part arrive in parts, out of order and
// twice, and are mirrored whole; parts that disagree on the whole's size
// are refused.
func TestCollector_Parts(t *testing.T) {
	srv := startServer(t)
	store := t.TempDir()
	p := newPub(t, srv.ClientURL())
	s := newSource(t, t.TempDir())
	big := make([]byte, 3*fleet.MaxChunk/2)
	rand.NewChaCha8([32]byte{1}).Read(big) // incompressible
	note := &event.Note{Author: "t", Text: strings.Repeat("long ", fleet.MaxChunk/4), Attachment: "big", Blob: ledger.Sum(big).String()}
	if _, err := s.Append(t.Context(), ledger.Sync, event.MustRecord("", note, big)); err != nil {
		t.Fatal(err)
	}
	s.notes(t, 2, true)
	r := startCollector(t, srv.ClientURL(), store)
	h := s.head(t).Seq
	p.ship(s.Ledger, 0, 1)
	e, _ := s.Get(2)
	f, _ := s.BlobFrame(ledger.Sum(big))
	if fleet.BlobParts(int64(len(f))) < 2 || len(fleet.EntryMessages(prefix, s.ID(), 2, e.Raw)) < 2 {
		t.Fatal("the test needs an entry and a blob in parts")
	}
	// The blob's parts last first, one twice (another id).
	for i := fleet.BlobParts(int64(len(f))) - 1; i >= 0; i-- {
		m := fleet.BlobMessage(prefix, s.ID(), ledger.Sum(big), int64(len(f)), i, f[i*fleet.MaxChunk:min(len(f), (i+1)*fleet.MaxChunk)])
		p.must(m)
		if i == 0 {
			m.Header.Set(fleet.HdrMsgID, "twice")
			p.must(m)
		}
	}
	ms := fleet.EntryMessages(prefix, s.ID(), 2, e.Raw)
	// A part of entry 2 that says the entry is one byte longer.
	bad := nats.NewMsg(ms[0].Subject)
	for k, v := range ms[0].Header {
		bad.Header[k] = v
	}
	bad.Header.Set(fleet.HdrSize, fmt.Sprint(len(e.Raw)+1))
	bad.Header.Set(fleet.HdrMsgID, "bad")
	bad.Data = ms[0].Data
	p.must(ms[0])
	p.must(bad)
	for _, m := range ms[1:] {
		p.must(m)
	}
	p.ship(s.Ledger, 3, h)
	r.waitHead(t, s.ID(), h)
	if got := r.alerts(t, ""); len(got) != 1 || got[0].Kind != event.AlertMalformed {
		t.Fatalf("alerts %s", details(got))
	}
	waitFor(t, "the cosignature", func() bool { return r.source(t, s.ID()).Cosigned == h })
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	sameEntries(t, store, s.Ledger)
}
