package collector_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/opx-dev/opx/engine/checkpoint"
	"github.com/opx-dev/opx/fleet"
	"github.com/opx-dev/opx/fleet/collector"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/tlog"
)

// fork copies the source (its ledger and its signing key) into a second
// source with the same ledger id, as a second process or a restored copy
// would have it: from here on the two histories differ.
func fork(t *testing.T, a *src) *src {
	t.Helper()
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, f := range []string{"ledger.db", tlog.KeyFile} {
		b, err := os.ReadFile(filepath.Join(filepath.Dir(a.path), f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	reopen := func(path string) *src {
		k := checkpoint.ForLedger(path)
		l, err := ledger.Open(path, ledger.Options{NoSync: true, SignCheckpoint: k.Sign})
		if err != nil {
			t.Fatal(err)
		}
		if err := k.Setup(context.Background(), l); err != nil {
			t.Fatal(err)
		}
		v, _ := k.Verifier()
		t.Cleanup(func() { l.Close() })
		return &src{Ledger: l, path: path, vkey: v.String(), k: k}
	}
	*a = *reopen(a.path)
	return reopen(filepath.Join(dir, "ledger.db"))
}

// Attack 1: the source's machine rewrites its ledger and ships the new
// history. Entries at seqs the collector holds come with other bytes (a
// rewrite; a fork where one is a checkpoint the source's key signed) and
// the new entries after them do not chain (a broken chain); the mirror
// keeps the history first shipped.
func TestCollector_Attack_RewrittenHistory(t *testing.T) {
	srv := startServer(t)
	store := t.TempDir()
	p := newPub(t, srv.ClientURL())
	a := newSource(t, t.TempDir())
	a.notes(t, 6, true)
	base := a.head(t).Seq
	a.notes(t, 6, true)
	p.hello(a.Ledger, "a")
	p.ship(a.Ledger, 0, a.head(t).Seq)
	r := startCollector(t, srv.ClientURL(), store)
	r.waitHead(t, a.ID(), a.head(t).Seq)
	shipped := a.head(t).Seq

	// The rewrite: everything after base, written again (a checkpoint
	// at the same size as the one shipped, signed by the same key), and
	// longer.
	b := fork(t, a)
	rewritten := rewind(t, b, base)
	rewritten.notes(t, 6, true)
	if rewritten.head(t).Seq != shipped {
		t.Fatalf("the rewritten checkpoint is at %d, the shipped one at %d", rewritten.head(t).Seq, shipped)
	}
	rewritten.notes(t, 4, false)
	// Shipped with the shipper's message ids: JetStream drops those it
	// has seen, so the first the collector gets is past its head.
	p.ship(rewritten.Ledger, base+1, rewritten.head(t).Seq)
	got := r.waitAlert(t, event.AlertBrokenChain)
	if !contains(got, event.AlertBrokenChain, shipped+1) {
		t.Fatalf("alerts %s", details(got))
	}
	// Shipped again later (past the duplicate window: other ids), the
	// entries the collector holds differ: a rewrite, and the rewritten
	// checkpoint is a fork.
	for seq := base + 1; seq <= shipped; seq++ {
		e, err := rewritten.Get(seq)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range fleet.EntryMessages(prefix, rewritten.ID(), seq, e.Raw) {
			m.Header.Set(fleet.HdrMsgID, m.Header.Get(fleet.HdrMsgID)+":later")
			p.must(m)
		}
	}
	waitFor(t, "rewrites and a fork", func() bool {
		as := r.alerts(t, "")
		return contains(as, event.AlertRewrite, base+1) && contains(as, event.AlertRewrite, shipped-1) && contains(as, event.AlertFork, shipped)
	})
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	// The mirror is the history first shipped.
	m, err := ledger.OpenReadOnly(filepath.Join(store, "sources", a.ID(), "ledger.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if h, err := m.Head(); err != nil || h.Seq != shipped {
		t.Fatalf("mirror head %d (%v), want %d", h.Seq, err, shipped)
	}
}

// rewind turns s into a ledger that holds s's entries up to seq and then
// goes its own way: the file is rebuilt from its first entries (what a
// user with the file can do).
func rewind(t *testing.T, s *src, seq uint64) *src {
	t.Helper()
	rs := raws(t, s.Ledger, 0, seq)
	frames := map[ledger.Hash][]byte{}
	for _, raw := range rs {
		e, _ := ledger.ParseEntry(raw)
		refs, _ := ledger.BlobRefs(e.Data)
		for _, h := range refs {
			f, err := s.BlobFrame(h)
			if err != nil {
				t.Fatal(err)
			}
			frames[h] = f
		}
	}
	s.Close()
	// A mirror is the one way to write given entries; then the mark is
	// dropped, as a forger would.
	dir := filepath.Dir(s.path)
	os.Remove(s.path)
	m, err := ledger.CreateMirror(s.path, rs[0], ledger.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	for h, f := range frames {
		if err := m.PutBlobFrame(context.Background(), ledger.Async, h, f); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := m.AppendVerbatim(context.Background(), ledger.Sync, rs[1:]...); err != nil {
		t.Fatal(err)
	}
	m.Close()
	unmark(t, s.path)
	k := checkpoint.NewKeeper(dir)
	l, err := ledger.Open(s.path, ledger.Options{NoSync: true, SignCheckpoint: k.Sign})
	if err != nil {
		t.Fatal(err)
	}
	if err := k.Setup(context.Background(), l); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return &src{Ledger: l, path: s.path, vkey: s.vkey, k: k}
}

// Attack 2: two processes ship under one ledger id with different
// histories (a copied ledger file and key). The second's hello names a
// head the collector holds with another hash, and its entries do not
// chain: a fork; the mirror keeps the first.
func TestCollector_Attack_TwoHistoriesOneID(t *testing.T) {
	srv := startServer(t)
	store := t.TempDir()
	p := newPub(t, srv.ClientURL())
	a := newSource(t, t.TempDir())
	a.notes(t, 5, true)
	b := fork(t, a)
	a.notes(t, 8, true)
	b.notes(t, 3, false) // b's head is below a's, at another hash
	r := startCollector(t, srv.ClientURL(), store)
	p.hello(a.Ledger, "a")
	p.ship(a.Ledger, 0, a.head(t).Seq)
	r.waitHead(t, a.ID(), a.head(t).Seq)
	p.hello(b.Ledger, "b")
	got := r.waitAlert(t, event.AlertFork)
	if !contains(got, event.AlertFork, b.head(t).Seq) {
		t.Fatalf("alerts %s", details(got))
	}
	// b goes on past a's head and ships: its entries break a's chain,
	// and with two engines saying hello it is a fork.
	b.notes(t, 20, true)
	p.hello(b.Ledger, "b2")
	p.ship(b.Ledger, 0, b.head(t).Seq)
	waitFor(t, "a fork at the first entry past a's head", func() bool {
		return contains(r.alerts(t, event.AlertFork), event.AlertFork, a.head(t).Seq+1)
	})
	// The mirror stays a's history. (Which process's entry at a seq the
	// stream keeps is whichever published it first: JetStream drops the
	// other as a duplicate; the fork alert is what tells.)
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	sameEntries(t, store, a.Ledger)
}

// Attack 3: a checkpoint signed by another key than the one pinned from
// the source's first ledger.key is a bad signature and is not cosigned;
// a ledger.key naming another key is key-replaced, and does not make
// that key trusted.
func TestCollector_Attack_OtherKey(t *testing.T) {
	srv := startServer(t)
	store := t.TempDir()
	p := newPub(t, srv.ClientURL())
	a := newSource(t, t.TempDir())
	a.notes(t, 4, true)
	good := a.head(t).Seq
	r := startCollector(t, srv.ClientURL(), store)
	p.ship(a.Ledger, 0, good)
	waitFor(t, "the first cosignature", func() bool { s := r.source(t, a.ID()); return s != nil && s.Cosigned == good })

	// The same ledger, reopened with another signer for its origin.
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
	a.notes(t, 3, true)
	forged := a.head(t).Seq
	p.ship(a.Ledger, good+1, forged)
	got := r.waitAlert(t, event.AlertBadSignature)
	if !contains(got, event.AlertBadSignature, forged) {
		t.Fatalf("alerts %s", details(got))
	}
	// Recording the other key does not make it trusted.
	if _, err := l.Append(context.Background(), ledger.Sync, event.MustRecord("", &event.Key{VKey: other.Verifier().String(), Reason: event.KeyReplaced, Detail: "lost"})); err != nil {
		t.Fatal(err)
	}
	a.notes(t, 2, true)
	p.ship(a.Ledger, forged+1, a.head(t).Seq)
	r.waitAlert(t, event.AlertKeyReplaced)
	waitFor(t, "a bad signature on the checkpoint after the new key", func() bool {
		return contains(r.alerts(t, event.AlertBadSignature), event.AlertBadSignature, a.head(t).Seq)
	})
	r.waitHead(t, a.ID(), a.head(t).Seq)
	if s := r.source(t, a.ID()); s.Cosigned != good {
		t.Fatalf("cosigned %d, want %d (only the checkpoint of the pinned key)", s.Cosigned, good)
	}
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	sameEntries(t, store, a.Ledger)
}

// unmark drops a mirror's mark (a forger's edit of the file).
func unmark(t *testing.T, path string) {
	t.Helper()
	editMeta(t, path, "mirror", nil)
}

// With an allow-list, a source is checked with the keys it names for the
// source's origin, whatever the source's ledger.key says.
func TestCollector_AllowKeys(t *testing.T) {
	srv := startServer(t)
	p := newPub(t, srv.ClientURL())
	s := newSource(t, t.TempDir())
	s.notes(t, 4, true)

	// Its own key allowed: cosigned, no alert.
	r := startCollector(t, srv.ClientURL(), t.TempDir(), func(c *collector.Config) { c.AllowKeys = []string{s.vkey + "\n"} })
	p.ship(s.Ledger, 0, s.head(t).Seq)
	waitFor(t, "the cosignature", func() bool { src := r.source(t, s.ID()); return src != nil && src.Cosigned == s.head(t).Seq })
	if a := r.alerts(t, ""); len(a) != 0 {
		t.Fatalf("alerts: %s", details(a))
	}
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}

	// Another key allowed: the source's own is not trusted.
	other := keyOf(t, s.ID())
	r2 := startCollector(t, srv.ClientURL(), t.TempDir(), func(c *collector.Config) {
		c.AllowKeys = []string{other.Verifier().String()}
		c.Durable = "second"
	})
	r2.waitAlert(t, event.AlertKeyReplaced)
	got := r2.waitAlert(t, event.AlertBadSignature)
	if !contains(got, event.AlertBadSignature, s.head(t).Seq) {
		t.Fatalf("alerts %s", details(got))
	}
	if src := r2.source(t, s.ID()); src.Cosigned != 0 {
		t.Fatalf("cosigned %d", src.Cosigned)
	}
	if _, err := collector.New(collector.Config{Store: t.TempDir(), AllowKeys: []string{"junk"}}); err == nil {
		t.Fatal("a junk allowed key was taken")
	}
}
