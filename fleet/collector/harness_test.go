package collector_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	bolt "go.etcd.io/bbolt"

	"github.com/opx-dev/opx/engine/checkpoint"
	"github.com/opx-dev/opx/fleet"
	"github.com/opx-dev/opx/fleet/collector"
	"github.com/opx-dev/opx/fleet/natsrv"
	"github.com/opx-dev/opx/fleet/natsrv/natsrvtest"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/ledgertest"
	"github.com/opx-dev/opx/ledger/tlog"
)

const prefix = "t"

// waitFor polls cond until it holds (never a fixed sleep: CI is slow).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func startServer(t *testing.T) *natsrv.Server { return natsrvtest.Start(t) }

// running is a collector running on its own goroutine.
type running struct {
	store string
	c     *collector.Collector
	stop  func() error
}

// startCollector runs a collector on store until the test ends or stop.
func startCollector(t *testing.T, url, store string, mod ...func(*collector.Config)) *running {
	t.Helper()
	cfg := collector.Config{URL: url, Prefix: prefix, Store: store, NoSync: true, Logf: t.Logf}
	for _, f := range mod {
		f(&cfg)
	}
	c, err := collector.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	stopped := false
	r := &running{store: store, c: c}
	r.stop = func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		err := <-done
		if cerr := c.Close(); err == nil {
			err = cerr
		}
		return err
	}
	t.Cleanup(func() {
		if err := r.stop(); err != nil {
			t.Errorf("collector: %v", err)
		}
		checkStore(t, store)
	})
	return r
}

// checkStore verifies the collector's ledger and every mirror.
func checkStore(t *testing.T, store string) {
	t.Helper()
	ledgertest.MustVerify(t, filepath.Join(store, collector.OwnLedger), event.StrictOptions())
	dirs, _ := os.ReadDir(filepath.Join(store, "sources"))
	for _, d := range dirs {
		p := collector.SourcePath(store, d.Name())
		if _, err := os.Stat(p); err == nil {
			// The chain, tiles and payloads; not the checkpoints'
			// signatures: a mirror holds what a hostile source signed.
			ledgertest.MustVerify(t, p, event.StrictOptions())
		}
	}
}

func (r *running) status(t *testing.T) *collector.Status {
	t.Helper()
	s, err := collector.OpenStore(r.store)
	if err != nil {
		return nil
	}
	st, err := s.Status()
	if err != nil {
		return nil
	}
	return st
}

func (r *running) source(t *testing.T, id string) *collector.SourceStatus {
	st := r.status(t)
	if st == nil {
		return nil
	}
	for i := range st.Sources {
		if st.Sources[i].ID == id {
			return &st.Sources[i]
		}
	}
	return nil
}

// alerts returns the alerts of kind (every kind when "").
func (r *running) alerts(t *testing.T, kind string) []collector.Alert {
	st := r.status(t)
	if st == nil {
		return nil
	}
	var out []collector.Alert
	for _, a := range st.Alerts {
		if kind == "" || a.Kind == kind {
			out = append(out, a)
		}
	}
	return out
}

func (r *running) waitHead(t *testing.T, id string, seq uint64) {
	t.Helper()
	waitFor(t, fmt.Sprintf("source %s at %d", id, seq), func() bool {
		s := r.source(t, id)
		return s != nil && s.HasMirror && s.HeadSeq == seq
	})
}

func (r *running) waitAlert(t *testing.T, kind string) []collector.Alert {
	t.Helper()
	var got []collector.Alert
	waitFor(t, "a "+kind+" alert", func() bool {
		got = r.alerts(t, kind)
		return len(got) > 0
	})
	return got
}

// src is a source ledger that records its key and signs checkpoints, as
// an engine's does.
type src struct {
	*ledger.Ledger
	path string
	vkey string
	k    *checkpoint.Keeper
}

func newSource(t *testing.T, dir string) *src { return newSourceAs(t, dir, "") }

// newSourceAs is newSource signing under origin (ledger.origin; "" the
// default).
func newSourceAs(t *testing.T, dir, origin string) *src {
	t.Helper()
	path := filepath.Join(dir, "ledger.db")
	k := checkpoint.ForLedger(path)
	k.SetOrigin(origin)
	l, err := ledger.Create(path, ledger.Options{NoSync: true, SignCheckpoint: k.Sign})
	if err != nil {
		t.Fatal(err)
	}
	if err := k.Setup(context.Background(), l); err != nil {
		t.Fatal(err)
	}
	v, _ := k.Verifier()
	s := &src{Ledger: l, path: path, vkey: v.String(), k: k}
	t.Cleanup(func() { l.Close() })
	return s
}

// notes appends n notes, each third with a blob, and a signed checkpoint
// after them when cp.
func (s *src) notes(t *testing.T, n int, cp bool) {
	t.Helper()
	for i := range n {
		p := &event.Note{Author: "t", Text: fmt.Sprintf("note %d of %s", i, s.path)}
		var blobs [][]byte
		if i%3 == 0 {
			content := bytes.Repeat([]byte(fmt.Sprintf("attachment %d %s ", i, s.path)), 50)
			p.Attachment, p.Blob = "a.txt", ledger.Sum(content).String()
			blobs = append(blobs, content)
		}
		if _, err := s.Append(context.Background(), ledger.Sync, event.MustRecord("", p, blobs...)); err != nil {
			t.Fatal(err)
		}
	}
	if cp {
		if _, err := s.Checkpoint(context.Background(), ledger.Sync); err != nil {
			t.Fatal(err)
		}
	}
}

func (s *src) head(t *testing.T) ledger.Head {
	h, err := s.Head()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// raws returns the source's entries from..to.
func raws(t *testing.T, l *ledger.Ledger, from, to uint64) [][]byte {
	t.Helper()
	var out [][]byte
	if err := l.RangeRaw(from, to, func(_ uint64, raw []byte) error {
		out = append(out, bytes.Clone(raw))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// pub publishes crafted messages as a hostile or hand-driven source.
type pub struct {
	t  *testing.T
	js jetstream.JetStream
}

func newPub(t *testing.T, url string) *pub {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if err := fleet.EnsureStreams(context.Background(), js, prefix, 1); err != nil {
		t.Fatal(err)
	}
	return &pub{t: t, js: js}
}

func (p *pub) msg(m *nats.Msg) error {
	_, err := p.js.PublishMsg(context.Background(), m)
	return err
}

func (p *pub) must(m *nats.Msg) {
	p.t.Helper()
	if err := p.msg(m); err != nil {
		p.t.Fatalf("publish: %v", err)
	}
}

// ship publishes a ledger's entries from..to (and the blobs they name
// first), as the shipper does.
func (p *pub) ship(l *ledger.Ledger, from, to uint64) {
	p.t.Helper()
	for seq := from; seq <= to; seq++ {
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
				part := f[i*fleet.MaxChunk : min(len(f), (i+1)*fleet.MaxChunk)]
				p.must(fleet.BlobMessage(prefix, l.ID(), h, int64(len(f)), i, part))
			}
		}
		for _, m := range fleet.EntryMessages(prefix, l.ID(), seq, e.Raw) {
			p.must(m)
		}
	}
}

// hello publishes a hello of the ledger at its head.
func (p *pub) hello(l *ledger.Ledger, boot string) {
	p.t.Helper()
	h, err := l.Head()
	if err != nil {
		p.t.Fatal(err)
	}
	m, err := fleet.HelloMessage(prefix, fleet.Hello{LedgerID: l.ID(), Boot: boot, Host: "h-" + boot, Workspace: "/w",
		HeadSeq: h.Seq, HeadHash: h.Hash.String()})
	if err != nil {
		p.t.Fatal(err)
	}
	p.must(m)
}

// sameEntries checks that the mirror holds exactly the source's entries.
func sameEntries(t *testing.T, store string, s *ledger.Ledger) {
	t.Helper()
	h, err := s.Head()
	if err != nil {
		t.Fatal(err)
	}
	m, err := ledger.OpenReadOnly(collector.SourcePath(store, s.ID()))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	want := raws(t, s, 0, h.Seq)
	got := raws(t, m, 0, ^uint64(0))
	if len(got) != len(want) {
		t.Fatalf("mirror holds %d entries, the source %d", len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("mirror entry %d differs from the source's", i)
		}
	}
}

// keyOf is a tlog signer for the origin of id (another key than the
// source's).
func keyOf(t *testing.T, id string) *tlog.Signer {
	skey, _, err := tlog.GenerateKey(tlog.Origin(id))
	if err != nil {
		t.Fatal(err)
	}
	s, err := tlog.NewSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// editMeta sets (or with nil deletes) a meta key of a ledger file.
func editMeta(t *testing.T, path, key string, v []byte) {
	t.Helper()
	ledgertest.Edit(t, path, func(tx *bolt.Tx) error {
		m := tx.Bucket([]byte("meta"))
		if v == nil {
			return m.Delete([]byte(key))
		}
		return m.Put([]byte(key), v)
	})
}
