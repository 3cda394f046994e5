package collector_test

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/opx-dev/opx/fleet/collector"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/tlog"
)

// One origin, two paths: an opx source's checkpoints reach the collector
// over NATS (the fleet's path) and over HTTP add-checkpoint (an engine's
// ledger.witnesses naming the collector). The witness key must cosign one
// history of the origin whichever path comes first.

// startBothPaths runs a collector with NATS and add-checkpoint on
// loopback, and returns it with its add-checkpoint URL.
func startBothPaths(t *testing.T) (*running, *pub, string) {
	t.Helper()
	srv := startServer(t)
	r, url := startWitnessOn(t, srv.ClientURL(), t.TempDir())
	return r, newPub(t, srv.ClientURL()), url
}

// startWitnessOn runs a collector on store with add-checkpoint on
// loopback.
func startWitnessOn(t *testing.T, natsURL, store string) (*running, string) {
	t.Helper()
	r := startCollector(t, natsURL, store, func(c *collector.Config) { c.WitnessListen = "127.0.0.1:0" })
	waitFor(t, "the witness listener", func() bool { return r.c.WitnessAddr() != "" })
	return r, "http://" + r.c.WitnessAddr()
}

// noteAt is the signed checkpoint note of the source's entry seq.
func noteAt(t *testing.T, s *src, seq uint64) []byte {
	t.Helper()
	e, err := s.Get(seq)
	if err != nil {
		t.Fatal(err)
	}
	var cp event.Checkpoint
	if err := json.Unmarshal(e.Data, &cp); err != nil || cp.Note == "" {
		t.Fatalf("entry %d is not a signed checkpoint: %v", seq, err)
	}
	return []byte(cp.Note)
}

// addReq is the add-checkpoint body for the source's checkpoint entry at
// size from old, with the proof from its own tree.
func addReq(t *testing.T, s *src, old, size uint64) []byte {
	t.Helper()
	req := tlog.AddCheckpointRequest{OldSize: old, Checkpoint: noteAt(t, s, size)}
	if old > 0 && old < size {
		hs, err := s.ConsistencyProof(old, size)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hs {
			req.Proof = append(req.Proof, [32]byte(h))
		}
	}
	return req.Marshal()
}

// forkReq is a checkpoint of size signed by the source's key whose root
// is not its tree's (a source that signed two histories).
func forkReq(t *testing.T, s *src, old, size uint64) []byte {
	t.Helper()
	text, err := s.k.Sign(ledger.TreeHead{Size: size, Root: sha256.Sum256([]byte(fmt.Sprint("fork ", size)))})
	if err != nil {
		t.Fatal(err)
	}
	return tlog.AddCheckpointRequest{OldSize: old, Checkpoint: []byte(text)}.Marshal()
}

func (r *running) waitCosigned(t *testing.T, id string, size uint64) {
	t.Helper()
	waitFor(t, fmt.Sprintf("source %s cosigned at %d", id, size), func() bool {
		s := r.source(t, id)
		return s != nil && s.Cosigned == size
	})
}

func want409(t *testing.T, url string, body []byte, latest uint64) {
	t.Helper()
	code, ctype, b := post(t, url, body)
	if code != 409 || ctype != tlog.ContentTypeSize || string(b) != fmt.Sprintf("%d\n", latest) {
		t.Fatalf("%d %q %q, want 409 %q %d", code, ctype, b, tlog.ContentTypeSize, latest)
	}
}

// wantRoot409 posts a checkpoint of the size cosigned with another root:
// 409 without a size (a root mismatch, not a stale size).
func wantRoot409(t *testing.T, url string, body []byte) {
	t.Helper()
	code, ctype, b := post(t, url, body)
	if code != 409 || ctype == tlog.ContentTypeSize || !strings.Contains(string(b), "another root") {
		t.Fatalf("%d %q %q, want 409 (another root) without a size", code, ctype, b)
	}
}

// TestWitnessPaths_NATSThenHTTP: a checkpoint cosigned over NATS is the
// origin's latest for add-checkpoint: a request from an older size gets
// 409 with it, the same tree is cosigned again, another root at its
// size is 409 (and a fork alert: the source signed two roots for one
// size), and an extension from it is cosigned.
func TestWitnessPaths_NATSThenHTTP(t *testing.T) {
	r, p, url := startBothPaths(t)
	s := newSource(t, t.TempDir())
	s.notes(t, 10, true)
	cp1 := s.head(t).Seq
	p.ship(s.Ledger, 0, cp1)
	r.waitCosigned(t, s.ID(), cp1)

	want409(t, url, addReq(t, s, 0, cp1), cp1)
	code, _, body := post(t, url, addReq(t, s, cp1, cp1))
	if code != 200 {
		t.Fatalf("the tree cosigned over NATS, again over HTTP: %d %q", code, body)
	}
	verifyCosig(t, r.c.WitnessKey(), noteAt(t, s, cp1), body)
	wantRoot409(t, url, forkReq(t, s, cp1, cp1))
	if forks := r.waitAlert(t, event.AlertFork); forks[0].SourceSeq != cp1 || !strings.Contains(forks[0].Detail, "— ") {
		t.Fatalf("fork alert %+v, want one at %d with the signed note", forks[0], cp1)
	}

	s.notes(t, 6, true)
	cp2 := s.head(t).Seq
	if code, _, body := post(t, url, addReq(t, s, cp1, cp2)); code != 200 {
		t.Fatalf("an extension over HTTP: %d %q", code, body)
	}
	// NATS brings the same tree: cosigned there too (the source waits
	// for it), nothing forked.
	p.ship(s.Ledger, cp1+1, cp2)
	r.waitCosigned(t, s.ID(), cp2)
	s.notes(t, 4, true)
	cp3 := s.head(t).Seq
	p.ship(s.Ledger, cp2+1, cp3)
	r.waitCosigned(t, s.ID(), cp3)
	want409(t, url, addReq(t, s, cp2, cp3), cp3) // stale: NATS went to cp3
	if code, _, body := post(t, url, addReq(t, s, cp3, cp3)); code != 200 {
		t.Fatalf("the latest again: %d %q", code, body)
	}
	if a := r.alerts(t, ""); len(a) != 1 {
		t.Fatalf("alerts beside the one fork: %+v", a)
	}
}

// TestWitnessPaths_HTTPThenNATS: add-checkpoint goes first. An honest
// checkpoint cosigned over HTTP is cosigned over NATS too when its tree
// arrives; a root the mirror does not have (the source signed two
// histories, one sent over HTTP) is a fork alert and no cosignature over
// NATS, whether the mirror's next checkpoint is at that size or beyond.
func TestWitnessPaths_HTTPThenNATS(t *testing.T) {
	t.Run("honest", func(t *testing.T) {
		r, p, url := startBothPaths(t)
		s := newSource(t, t.TempDir())
		s.notes(t, 3, false)
		h := s.head(t).Seq
		p.ship(s.Ledger, 0, h)
		r.waitHead(t, s.ID(), h) // the key is pinned: the origin is known
		s.notes(t, 8, true)
		cp1 := s.head(t).Seq
		if code, _, body := post(t, url, addReq(t, s, 0, cp1)); code != 200 {
			t.Fatalf("first over HTTP: %d %q", code, body)
		}
		p.ship(s.Ledger, h+1, cp1)
		r.waitCosigned(t, s.ID(), cp1)
		s.notes(t, 4, true)
		cp2 := s.head(t).Seq
		p.ship(s.Ledger, cp1+1, cp2)
		r.waitCosigned(t, s.ID(), cp2)
		want409(t, url, addReq(t, s, cp1, cp2), cp2)
		if a := r.alerts(t, ""); len(a) != 0 {
			t.Fatalf("alerts on an honest source: %+v", a)
		}
	})
	for _, tc := range []struct {
		name  string
		ahead uint64 // the mirror's next checkpoint is this far beyond the forked size
	}{{"at the forked size", 0}, {"beyond it", 5}} {
		t.Run("fork "+tc.name, func(t *testing.T) {
			r, p, url := startBothPaths(t)
			s := newSource(t, t.TempDir())
			s.notes(t, 3, false)
			h := s.head(t).Seq
			p.ship(s.Ledger, 0, h)
			r.waitHead(t, s.ID(), h)
			const k = 8
			cp := h + k + 1 // where s.notes(k, true) puts its checkpoint
			forked := cp - tc.ahead
			if code, _, body := post(t, url, forkReq(t, s, 0, forked)); code != 200 {
				t.Fatalf("a forked checkpoint over HTTP: %d %q", code, body)
			}
			s.notes(t, k, true)
			if got := s.head(t).Seq; got != cp {
				t.Fatalf("checkpoint at %d, want %d", got, cp)
			}
			p.ship(s.Ledger, h+1, cp)
			forks := r.waitAlert(t, event.AlertFork)
			if forks[0].SourceSeq != forked || !strings.Contains(forks[0].Detail, "add-checkpoint") {
				t.Fatalf("fork alert %+v, want one at %d naming add-checkpoint", forks[0], forked)
			}
			if c := r.source(t, s.ID()).Cosigned; c != 0 {
				t.Fatalf("cosigned %d over NATS after cosigning a fork of it over HTTP", c)
			}
			// HTTP goes on from the forked size, never back to the mirror's.
			want409(t, url, addReq(t, s, 0, cp), forked)
			if tc.ahead == 0 {
				wantRoot409(t, url, addReq(t, s, cp, cp)) // another root at the size cosigned
			}
		})
	}
}

// TestWitnessPaths_TeamOrigin: a source signing under its team's own
// origin (ledger.origin, recorded by its ledger.key) is mirrored and
// cosigned over NATS, and witnessed over add-checkpoint under that
// origin, one state for both; its default origin is not one the
// collector witnesses for it.
func TestWitnessPaths_TeamOrigin(t *testing.T) {
	const origin = "example.com/opx/team-a"
	srv := startServer(t)
	r, url := startWitnessOn(t, srv.ClientURL(), t.TempDir())
	p := newPub(t, srv.ClientURL())
	s := newSourceAs(t, t.TempDir(), origin)
	s.notes(t, 10, true)
	cp1 := s.head(t).Seq
	if !strings.HasPrefix(string(noteAt(t, s, cp1)), origin+"\n") {
		t.Fatalf("checkpoint %q", noteAt(t, s, cp1))
	}
	p.ship(s.Ledger, 0, cp1)
	r.waitCosigned(t, s.ID(), cp1)
	want409(t, url, addReq(t, s, 0, cp1), cp1)
	s.notes(t, 5, true)
	cp2 := s.head(t).Seq
	code, _, body := post(t, url, addReq(t, s, cp1, cp2))
	if code != 200 {
		t.Fatalf("an extension under the team's origin: %d %q", code, body)
	}
	verifyCosig(t, r.c.WitnessKey(), noteAt(t, s, cp2), body)
	p.ship(s.Ledger, cp1+1, cp2)
	r.waitCosigned(t, s.ID(), cp2)
	// cp3 over NATS only; restarted, the collector knows it as the
	// origin's latest from its fleet.cosigned entry.
	s.notes(t, 4, true)
	cp3 := s.head(t).Seq
	p.ship(s.Ledger, cp2+1, cp3)
	r.waitCosigned(t, s.ID(), cp3)
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	r, url = startWitnessOn(t, srv.ClientURL(), r.store)
	want409(t, url, addReq(t, s, cp2, cp3), cp3)
	other := newTestLog(t, tlog.Origin(s.ID()))
	other.grow(t, 3)
	if code, _, _ := post(t, url, other.request(t, 0, 3)); code != 404 {
		t.Fatalf("the default origin of a source signing under its team's: %d, want 404", code)
	}
	if a := r.alerts(t, ""); len(a) != 0 {
		t.Fatalf("alerts: %+v", a)
	}
}

// TestCollector_AllowSourceKeys_TeamOrigin: a source under its team's
// origin checked with an allowed key (by ledger id: the origin does not
// name it) is cosigned without an alert, and its origin is witnessed
// over add-checkpoint from the start; a key of another ledger's default
// origin is refused for the id.
func TestCollector_AllowSourceKeys_TeamOrigin(t *testing.T) {
	const origin = "example.com/opx/team-b"
	srv := startServer(t)
	p := newPub(t, srv.ClientURL())
	s := newSourceAs(t, t.TempDir(), origin)
	s.notes(t, 6, true)
	cp := s.head(t).Seq
	r := startCollector(t, srv.ClientURL(), t.TempDir(), func(c *collector.Config) {
		c.AllowSourceKeys = map[string][]string{s.ID(): {s.vkey}}
		c.WitnessListen = "127.0.0.1:0"
	})
	waitFor(t, "the witness listener", func() bool { return r.c.WitnessAddr() != "" })
	url := "http://" + r.c.WitnessAddr()
	// Known before anything was shipped: the allow-list names the key.
	if code, _, body := post(t, url, addReq(t, s, 0, cp)); code != 200 {
		t.Fatalf("add-checkpoint under the allowed team origin: %d %q", code, body)
	}
	p.ship(s.Ledger, 0, cp)
	r.waitCosigned(t, s.ID(), cp)
	if a := r.alerts(t, ""); len(a) != 0 {
		t.Fatalf("alerts: %s", details(a))
	}
	other := keyOf(t, "00112233445566778899aabbccddeeff")
	if _, err := collector.New(collector.Config{Store: t.TempDir(), AllowSourceKeys: map[string][]string{s.ID(): {other.Verifier().String()}}}); err == nil {
		t.Fatal("another ledger's key allowed for the id")
	}
}
