package collector_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opx-dev/opx/fleet/collector"

	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/tlog"
)

// add-checkpoint for a source's origin is checked against the source's
// mirror (witnessed_mirror.go). The forks here are the real kind: a copy
// of the source's ledger and key (a restored backup, a second process)
// that goes on from a checkpoint the witness cosigned, so its
// consistency proof from that checkpoint verifies; only the mirror knows
// the source's entries after it are others.

// forkedPair ships a source to its first checkpoint (cosigned over NATS)
// and returns it with a copy of it (fork) and that checkpoint's size.
func forkedPair(t *testing.T, r *running, p *pub) (a, b *src, cp1 uint64) {
	t.Helper()
	a = newSource(t, t.TempDir())
	a.notes(t, 6, true)
	cp1 = a.head(t).Seq
	p.ship(a.Ledger, 0, cp1)
	r.waitCosigned(t, a.ID(), cp1)
	return a, fork(t, a), cp1
}

// TestWitnessMirror_AddCheckpoint_MirrorHoldsSize: the mirror holds the
// size of a checkpoint that extends the one cosigned: its root is not
// the mirror's, so it is refused with 422 and a fork alert carrying the
// source's signed note, and nothing is cosigned for it.
func TestWitnessMirror_AddCheckpoint_MirrorHoldsSize(t *testing.T) {
	r, p, url := startBothPaths(t)
	a, b, cp1 := forkedPair(t, r, p)
	a.notes(t, 6, false)
	h := a.head(t).Seq
	p.ship(a.Ledger, cp1+1, h)
	r.waitHead(t, a.ID(), h)
	b.notes(t, 5, true) // its checkpoint at h: the size the mirror holds
	if got := b.head(t).Seq; got != h {
		t.Fatalf("the copy's checkpoint at %d, want %d", got, h)
	}
	code, _, body := post(t, url, addReq(t, b, cp1, h))
	if code != 422 || !strings.Contains(string(body), "source "+a.ID()) {
		t.Fatalf("a fork the mirror refutes: %d %q, want 422 naming the source", code, body)
	}
	forks := r.waitAlert(t, event.AlertFork)
	if forks[0].SourceSeq != h || !strings.Contains(forks[0].Detail, "add-checkpoint") || !strings.Contains(forks[0].Detail, "\n— ") {
		t.Fatalf("fork alert %+v, want one at %d with the signed note", forks[0], h)
	}
	// The witness's state did not move: the honest extension from cp1 is
	// still the one to send.
	a.notes(t, 2, true)
	cp2 := a.head(t).Seq
	if code, _, body := post(t, url, addReq(t, a, cp1, cp2)); code != 200 {
		t.Fatalf("the honest extension after the refused fork: %d %q", code, body)
	}
}

// TestWitnessMirror_AddCheckpoint_MirrorBehind: the mirror does not hold
// the size yet: the fork is cosigned on its proof alone, as any witness
// would, and once NATS brings the source's own entries to that size
// (with no checkpoint among them, so the NATS cosigning path never
// looks), the collector finds the roots differ and raises the fork.
func TestWitnessMirror_AddCheckpoint_MirrorBehind(t *testing.T) {
	r, p, url := startBothPaths(t)
	a, b, cp1 := forkedPair(t, r, p)
	a.notes(t, 6, false)
	h := a.head(t).Seq
	b.notes(t, 5, true)
	if code, _, body := post(t, url, addReq(t, b, cp1, h)); code != 200 {
		t.Fatalf("a fork beyond the mirror: %d %q, want 200 (the proof verifies)", code, body)
	}
	if a := r.alerts(t, ""); len(a) != 0 {
		t.Fatalf("alerts before the mirror has the size: %+v", a)
	}
	p.ship(a.Ledger, cp1+1, h)
	forks := r.waitAlert(t, event.AlertFork)
	if forks[0].SourceSeq != h || !strings.Contains(forks[0].Detail, "before its mirror had it") || !strings.Contains(forks[0].Detail, "\n— ") {
		t.Fatalf("fork alert %+v, want one at %d with the cosigned note", forks[0], h)
	}
}

// TestWitnessMirror_AddCheckpoint_RaceWithNATS: the source's own
// checkpoint of size h comes over NATS while its copy's checkpoint of
// the same size comes over add-checkpoint. Whichever is first, the
// witness key cosigns one root at h and the other is a fork alert: a
// 200 over HTTP means NATS does not cosign h; a refusal (422 when the
// mirror was first; 409 with h, then 409 for the root when NATS's
// cosignature was) means it does. Two rounds at once, one with HTTP
// sent after NATS's cosignature (the order a loaded machine may not
// meet by chance).
func TestWitnessMirror_AddCheckpoint_RaceWithNATS(t *testing.T) {
	r, p, url := startBothPaths(t)
	for round, afterNATS := range []bool{false, false, true} {
		a, b, cp1 := forkedPair(t, r, p)
		a.notes(t, 5, true)
		h := a.head(t).Seq
		b.notes(t, 5, true)
		req := addReq(t, b, cp1, h)
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { defer wg.Done(); p.ship(a.Ledger, cp1+1, h) }()
		if afterNATS {
			wg.Wait()
			r.waitCosigned(t, a.ID(), h)
		}
		code, ctype, body := post(t, url, req)
		if code == 409 {
			// NATS went first: the client retries from the size stated,
			// and is told the root at it is another.
			if ctype != tlog.ContentTypeSize || string(body) != fmt.Sprintf("%d\n", h) {
				t.Fatalf("round %d: 409 %q %q, want %d", round, ctype, body, h)
			}
			wantRoot409(t, url, addReq(t, b, h, h))
		}
		wg.Wait()
		waitFor(t, fmt.Sprintf("round %d: a fork alert for %s at %d", round, a.ID(), h), func() bool {
			for _, al := range r.alerts(t, event.AlertFork) {
				if al.Source == a.ID() && al.SourceSeq == h {
					return true
				}
			}
			return false
		})
		got := r.source(t, a.ID()).Cosigned
		switch code {
		case 200: // HTTP first: NATS must not cosign h (the alert came with that batch)
			if got != cp1 {
				t.Fatalf("round %d: cosigned %d over NATS after cosigning the copy's %d over HTTP", round, got, h)
			}
		case 409, 422:
			r.waitCosigned(t, a.ID(), h)
		default:
			t.Fatalf("round %d: %d %q", round, code, body)
		}
		t.Logf("round %d: add-checkpoint %d", round, code)
	}
}

// TestWitnessMirror_AddCheckpoint_FarAhead: a copy of the source's key
// gets a tree far beyond the source cosigned over add-checkpoint (its
// proof verifies: it extends the cosigned checkpoint). The mirror never
// reaches that size, so the fork is never compared; the status shows the
// size, and once the source has shipped since and the mirror still
// lacks it WitnessAheadAfter later, that is a gap alert quoting the
// cosigned note. Before the source ships anything, there is none (NATS
// may just be slower than HTTP).
func TestWitnessMirror_AddCheckpoint_FarAhead(t *testing.T) {
	srv := startServer(t)
	r := startCollector(t, srv.ClientURL(), t.TempDir(), func(c *collector.Config) {
		c.WitnessListen, c.WitnessAheadAfter = "127.0.0.1:0", time.Millisecond
	})
	waitFor(t, "the witness listener", func() bool { return r.c.WitnessAddr() != "" })
	url, p := "http://"+r.c.WitnessAddr(), newPub(t, srv.ClientURL())
	a, b, cp1 := forkedPair(t, r, p)
	b.notes(t, 40, true)
	far := b.head(t).Seq
	if code, _, body := post(t, url, addReq(t, b, cp1, far)); code != 200 {
		t.Fatalf("a forged tree beyond the mirror: %d %q, want 200 (its proof verifies)", code, body)
	}
	waitFor(t, fmt.Sprintf("the status showing tree %d witnessed ahead of the mirror", far), func() bool {
		s := r.source(t, a.ID())
		return s != nil && s.WitnessedAhead == far
	})
	if g := r.alerts(t, event.AlertGap); len(g) != 0 {
		t.Fatalf("a gap alert before the source shipped anything since: %+v", g)
	}
	a.notes(t, 3, false)
	h := a.head(t).Seq
	p.ship(a.Ledger, cp1+1, h)
	r.waitHead(t, a.ID(), h)
	gaps := r.waitAlert(t, event.AlertGap)
	if gaps[0].Source != a.ID() || gaps[0].SourceSeq != far-1 || !strings.Contains(gaps[0].Detail, "add-checkpoint") ||
		!strings.Contains(gaps[0].Detail, "\n— ") {
		t.Fatalf("gap alert %+v, want one for %s at %d quoting the cosigned note", gaps[0], a.ID(), far-1)
	}
}
