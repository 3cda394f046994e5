package collector_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tdnote "github.com/transparency-dev/formats/note"
	"golang.org/x/mod/sumdb/note"

	"github.com/opx-dev/opx/fleet"
	"github.com/opx-dev/opx/fleet/collector"
	"github.com/opx-dev/opx/fleet/ship"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// recorder records cosignatures as the engine's recorder does.
type recorder struct{ l *ledger.Ledger }

func (r recorder) RecordCosigned(ctx context.Context, c *event.Cosigned) error {
	rec, err := event.Record("", c)
	if err != nil {
		return err
	}
	_, err = r.l.Append(ctx, ledger.Sync, rec)
	return err
}

func startShipper(t *testing.T, url string, s *src, witness string) *ship.Shipper {
	t.Helper()
	sh, err := ship.Start(context.Background(), ship.Config{URL: url, Prefix: prefix, Host: "h", Workspace: "/w", Version: "test",
		VerifierKey: s.vkey, WitnessKey: witness, Logf: t.Logf}, s.Ledger, recorder{s.Ledger})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sh.Close(0) })
	return sh
}

// cosignedOf returns the cosigned checkpoints the source recorded.
func cosignedOf(t *testing.T, l *ledger.Ledger) []event.Cosigned {
	t.Helper()
	h, err := l.Head()
	if err != nil {
		t.Fatal(err)
	}
	var out []event.Cosigned
	l.Range(0, h.Seq, func(e ledger.Entry) error {
		if e.Type == event.TypeCosigned {
			p, err := event.Decode(e)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, *p.(*event.Cosigned))
		}
		return nil
	})
	return out
}

// A real shipper ships a signing ledger; the collector mirrors it entry
// for entry, blobs included, verifies and cosigns its checkpoints, and
// the engine side records the cosignature, which verifies with the
// witness key and the source's key.
func TestCollector_ShipMirrorCosign(t *testing.T) {
	srv := startServer(t)
	store := t.TempDir()
	s := newSource(t, t.TempDir())
	s.notes(t, 20, true)
	r := startCollector(t, srv.ClientURL(), store)
	st := r.status(t)
	waitFor(t, "a status", func() bool { st = r.status(t); return st != nil })
	wkey := st.WitnessKey
	startShipper(t, srv.ClientURL(), s, wkey)
	s.notes(t, 30, true)
	cp1 := s.head(t).Seq
	s.notes(t, 5, false)
	waitFor(t, "the cosignature recorded by the source", func() bool {
		cs := cosignedOf(t, s.Ledger)
		return len(cs) > 0 && cs[len(cs)-1].TreeSize == cp1
	})
	r.waitHead(t, s.ID(), s.head(t).Seq)
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	sameEntries(t, store, s.Ledger)
	if a := r.alerts(t, ""); len(a) != 0 {
		t.Fatalf("alerts on an honest source: %+v", a)
	}
	// The note carries the source's signature and the witness's.
	cs := cosignedOf(t, s.Ledger)
	c := cs[len(cs)-1]
	sv, _ := note.NewVerifier(s.vkey)
	wv, err := tdnote.NewVerifierForCosignatureV1(wkey)
	if err != nil {
		t.Fatal(err)
	}
	n, err := note.Open([]byte(c.Note), note.VerifierList(sv, wv))
	if err != nil || len(n.Sigs) != 2 {
		t.Fatalf("cosigned note: %v (%d signatures verify)", err, len(n.Sigs))
	}
	// Every blob is in the mirror.
	m, err := ledger.OpenReadOnly(collector.SourcePath(store, s.ID()))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	opts, err := event.StrictOptionsFor(m)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := m.Verify(opts)
	if err != nil || !rep.OK {
		t.Fatalf("mirror verify: %v %v", err, rep.Err())
	}
	sum, _ := collector.OpenStore(store)
	srcs, err := sum.Sources()
	if err != nil || len(srcs) != 1 || srcs[0].Cosigned != cp1 || srcs[0].Host != "h" {
		t.Fatalf("sources %+v %v", srcs, err)
	}
}

// A collector stopped mid-stream and started again misses nothing,
// duplicates nothing, and publishes the cosignature it recorded, not a
// new one.
func TestCollector_Restart(t *testing.T) {
	srv := startServer(t)
	store := t.TempDir()
	s := newSource(t, t.TempDir())
	p := newPub(t, srv.ClientURL())
	s.notes(t, 10, true)
	p.ship(s.Ledger, 0, s.head(t).Seq)
	r := startCollector(t, srv.ClientURL(), store)
	r.waitHead(t, s.ID(), s.head(t).Seq)
	waitFor(t, "the cosignature", func() bool { src := r.source(t, s.ID()); return src != nil && src.Cosigned > 0 })
	first := lastCosig(t, p, s.ID())
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	// While it is down the source goes on; part of it is shipped twice.
	old := s.head(t).Seq
	s.notes(t, 10, false)
	p.ship(s.Ledger, old+1, s.head(t).Seq)
	p.ship(s.Ledger, old+3, s.head(t).Seq) // resends (deduplicated by JetStream)
	r2 := startCollector(t, srv.ClientURL(), store)
	r2.waitHead(t, s.ID(), s.head(t).Seq)
	// The cosignature published after the restart is the recorded one,
	// byte for byte.
	if again := lastCosig(t, p, s.ID()); !bytes.Equal(again, first) {
		t.Fatalf("cosignature after restart differs:\n%s\nfirst:\n%s", again, first)
	}
	s.notes(t, 3, true)
	p.ship(s.Ledger, s.head(t).Seq-3, s.head(t).Seq)
	r2.waitHead(t, s.ID(), s.head(t).Seq)
	waitFor(t, "the second cosignature", func() bool { src := r2.source(t, s.ID()); return src != nil && src.Cosigned == s.head(t).Seq })
	if err := r2.stop(); err != nil {
		t.Fatal(err)
	}
	sameEntries(t, store, s.Ledger)
	if a := r2.alerts(t, ""); len(a) != 0 {
		t.Fatalf("alerts after a restart: %+v", a)
	}
	// Each checkpoint was cosigned once.
	own, err := ledger.OpenReadOnly(filepath.Join(store, collector.OwnLedger))
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	sizes := map[uint64]int{}
	own.Range(0, ^uint64(0), func(e ledger.Entry) error {
		if e.Type == event.TypeFleetCosigned {
			p, _ := event.Decode(e)
			sizes[p.(*event.FleetCosigned).TreeSize]++
		}
		return nil
	})
	for size, n := range sizes {
		if n != 1 {
			t.Errorf("checkpoint %d cosigned %d times", size, n)
		}
	}
	if len(sizes) != 2 {
		t.Errorf("cosigned %v, want two checkpoints", sizes)
	}
}

func lastCosig(t *testing.T, p *pub, id string) []byte {
	t.Helper()
	var data []byte
	waitFor(t, "a cosignature on the stream", func() bool {
		st, err := p.js.Stream(context.Background(), fleet.CosigStream(prefix))
		if err != nil {
			return false
		}
		m, err := st.GetLastMsgForSubject(context.Background(), fleet.CosigSubject(prefix, id))
		if err != nil {
			return false
		}
		data = m.Data
		return true
	})
	return data
}

func contains(as []collector.Alert, kind string, seq uint64) bool {
	for _, a := range as {
		if a.Kind == kind && a.SourceSeq == seq {
			return true
		}
	}
	return false
}

func details(as []collector.Alert) string {
	var b strings.Builder
	for _, a := range as {
		b.WriteString(a.Kind + " " + a.Source + " " + a.Detail + "\n")
	}
	return b.String()
}

// Every message delivered again (what a crash between the mirrors'
// commit and the acks does, here all of them at once: a new consumer
// reads the stream from its start) changes nothing and raises nothing.
func TestCollector_Redelivery(t *testing.T) {
	srv := startServer(t)
	store := t.TempDir()
	p := newPub(t, srv.ClientURL())
	s := newSource(t, t.TempDir())
	s.notes(t, 30, true)
	p.hello(s.Ledger, "a")
	p.ship(s.Ledger, 0, s.head(t).Seq)
	r := startCollector(t, srv.ClientURL(), store)
	r.waitHead(t, s.ID(), s.head(t).Seq)
	waitFor(t, "the cosignature", func() bool { return r.source(t, s.ID()).Cosigned == s.head(t).Seq })
	first := lastCosig(t, p, s.ID())
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	s.notes(t, 4, false)
	p.ship(s.Ledger, s.head(t).Seq-3, s.head(t).Seq)
	r2 := startCollector(t, srv.ClientURL(), store, func(c *collector.Config) { c.Durable = "again" })
	r2.waitHead(t, s.ID(), s.head(t).Seq)
	if err := r2.stop(); err != nil {
		t.Fatal(err)
	}
	if a := r2.alerts(t, ""); len(a) != 0 {
		t.Fatalf("alerts after redelivery: %s", details(a))
	}
	if again := lastCosig(t, p, s.ID()); !bytes.Equal(again, first) {
		t.Fatal("the cosignature changed")
	}
	sameEntries(t, store, s.Ledger)
}

// A crash after a mirror's commit and before the collector's own ledger
// recorded what followed (the key pinned, the checkpoint cosigned): on
// start the collector pins the key from the mirror and cosigns its latest
// checkpoint. Here: a store that has the mirror and a fresh collector
// ledger.
func TestCollector_CatchUpAfterCrash(t *testing.T) {
	srv := startServer(t)
	store := t.TempDir()
	p := newPub(t, srv.ClientURL())
	s := newSource(t, t.TempDir())
	s.notes(t, 8, true)
	p.ship(s.Ledger, 0, s.head(t).Seq)
	r := startCollector(t, srv.ClientURL(), store)
	r.waitHead(t, s.ID(), s.head(t).Seq)
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	crashed := t.TempDir()
	dst := collector.SourcePath(crashed, s.ID())
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(collector.SourcePath(store, s.ID()))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o600); err != nil {
		t.Fatal(err)
	}
	r2 := startCollector(t, srv.ClientURL(), crashed, func(c *collector.Config) { c.Durable = "after-crash" })
	waitFor(t, "the cosignature", func() bool { src := r2.source(t, s.ID()); return src != nil && src.Cosigned == s.head(t).Seq })
	// And a checkpoint by another key after that is refused: the key
	// was pinned from the mirror.
	other := keyOf(t, s.ID())
	s.Close()
	l, err := ledger.Open(s.path, ledger.Options{NoSync: true, SignCheckpoint: func(th ledger.TreeHead) (string, error) {
		return other.Sign(th.Size, th.Root)
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	s.Ledger = l
	s.notes(t, 1, true)
	p.ship(s.Ledger, s.head(t).Seq-1, s.head(t).Seq)
	r2.waitAlert(t, event.AlertBadSignature)
}
