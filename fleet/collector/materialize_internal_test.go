package collector

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/opx-dev/opx/fleet/collector/journal"
	"github.com/opx-dev/opx/ledger"
)

// TestMaterializer_CommitsWait: a source is taken for its mirror's
// commit once matRipe records of it wait (at once), or once its oldest
// record waited 1/matCommitRate s per source waiting (so the commits per
// second stay near matCommitRate whatever the sources), or at once while
// the materializer closes; those that waited longest first.
func TestMaterializer_CommitsWait(t *testing.T) {
	m := &materializer{}
	m.cond = sync.NewCond(&m.mu)
	defer func() {
		m.mu.Lock()
		if m.timer != nil {
			m.timer.Stop()
		}
		m.mu.Unlock()
	}()
	push := func(s *source, n int) {
		recs := make([]journal.Record, n)
		srcs := make([]*source, n)
		for i := range recs {
			recs[i] = journal.Record{Kind: journal.Entry, Seq: uint64(i + 1), Data: []byte("entry"), Source: s.id}
			srcs[i] = s
		}
		m.push(1, recs, srcs, make([]ledger.Verified, n))
	}
	const n = 400
	srcs := make([]*source, n)
	for i := range srcs {
		srcs[i] = &source{id: fmt.Sprintf("src-%03d", i)}
		push(srcs[i], 1)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if w := m.wait(); w != n*time.Second/matCommitRate {
		t.Fatalf("wait with %d sources waiting: %v, want %v", n, w, n*time.Second/matCommitRate)
	}
	// A source with matRipe records waiting is taken at once, though the
	// others have not waited long enough.
	flood := &source{id: "flood"}
	m.mu.Unlock()
	push(flood, matRipe)
	m.mu.Lock()
	if got := m.pick(); got != flood || !got.busy {
		t.Fatalf("picked %v, want the source with %d records waiting", got, matRipe)
	}
	// The oldest record of the first sources waited long enough: they
	// are taken, in the order their records came.
	for _, s := range srcs[:3] {
		s.queue[0].at = s.queue[0].at.Add(-time.Minute)
	}
	for _, want := range srcs[:3] {
		if got := m.pick(); got != want {
			t.Fatalf("picked %v, want %s (waited longest)", got, want.id)
		}
	}
	// Closing: every source is taken at once.
	m.closing = true
	if got := m.pick(); got != srcs[3] {
		t.Fatalf("picked %v while closing, want %s", got, srcs[3].id)
	}
	if m.wait() != 0 {
		t.Fatalf("wait while closing: %v", m.wait())
	}
}

// TestMaterializer_WaitKeepsTheCommitRate: with 10,000 sources waiting
// (each at 0.1 entry/s) a source's records wait 50 s, so the mirrors'
// commits stay near matCommitRate a second, each carrying a few entries
// (with the wait capped at 10 s, each carried one: the cost per entry
// grew with the sources); beyond matMaxWait's sources, matMaxWait.
func TestMaterializer_WaitKeepsTheCommitRate(t *testing.T) {
	m := &materializer{}
	for _, tc := range []struct {
		sources int
		want    time.Duration
	}{{1000, 5 * time.Second}, {10000, 50 * time.Second}, {20000, matMaxWait}} {
		m.dirty = make([]*source, tc.sources)
		if w := m.wait(); w != tc.want {
			t.Errorf("%d sources waiting: wait %v, want %v", tc.sources, w, tc.want)
		}
	}
	if matMaxWait != time.Minute {
		t.Errorf("matMaxWait = %v, want 1m (10,000 sources at matCommitRate, and room)", matMaxWait)
	}
}
