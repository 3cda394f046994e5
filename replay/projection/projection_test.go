package projection_test

import (
	"crypto/sha256"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/ledgertest"
	"github.com/opx-dev/opx/replay/projection"
)

// sample imports the committed sample ledger and opens it with every
// projection (built on open).
func sample(t *testing.T) *ledger.Ledger {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "sample.db")
	if _, err := ledger.Import(filepath.Join("..", "..", "fixtures", "ledgers", "sample.jsonl.zst"), dst, ledger.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	l, err := ledger.Open(dst, ledger.Options{Projections: projection.All()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		l.Close()
		ledgertest.MustVerify(t, dst, event.StrictOptions())
	})
	return l
}

// digest hashes a bucket's pairs in order.
func digest(b ledger.Bucket) string {
	h := sha256.New()
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		fmt.Fprintf(h, "%d:%s%d:%s", len(k), k, len(v), v)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

func digests(t *testing.T, l *ledger.Ledger) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, p := range projection.All() {
		if err := l.ViewProjection(p, func(b ledger.Bucket) error { out[p.Name()] = digest(b); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestAll_RebuildIsByteIdentical: every p.* bucket of the sample, built on
// open, equals a fresh fold of the entries and comes out of `rebuild`
// byte-identical.
func TestAll_RebuildIsByteIdentical(t *testing.T) {
	l := sample(t)
	before := digests(t, l)
	for _, p := range projection.All() {
		m, err := ledger.FoldProjection(l, p, ^uint64(0))
		if err != nil {
			t.Fatal(err)
		}
		if digest(m) != before[p.Name()] {
			t.Errorf("%s: stored bucket differs from a fold of the entries", p.Name())
		}
	}
	if _, err := l.RebuildProjections(); err != nil {
		t.Fatal(err)
	}
	if after := digests(t, l); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("rebuild changed buckets:\n%v\n%v", before, after)
	}
}

// TestAll_SampleContent checks each projection against counts taken from
// the entries directly.
func TestAll_SampleContent(t *testing.T) {
	l := sample(t)
	h, _ := l.Head()
	created, messages, verdicts, snaps, approvals := map[string]bool{}, map[string]int{}, 0, map[string]int{}, 0
	l.Range(0, h.Seq, func(e ledger.Entry) error {
		switch e.Type {
		case event.TypeSessionCreated:
			created[e.Session] = true
		case event.TypeClientMessage, event.TypeResponseComplete:
			messages[e.Session]++
		case event.TypeShieldVerdict:
			verdicts++
		case event.TypeSnapshot:
			snaps[e.Session]++
		case event.TypeApprovalRequested:
			approvals++
		}
		return nil
	})
	l.ViewProjection(projection.Sessions{}, func(b ledger.Bucket) error {
		ss := projection.ReadSessions(b)
		if len(ss) != len(created) || len(ss) < 10 {
			t.Errorf("%d sessions, the entries create %d", len(ss), len(created))
		}
		for _, s := range ss {
			if s.Messages != messages[s.ID] {
				t.Errorf("session %s: %d messages, entries %d", s.ID, s.Messages, messages[s.ID])
			}
		}
		return nil
	})
	l.ViewProjection(projection.History{}, func(b ledger.Bucket) error {
		for id, n := range messages {
			if got := projection.ReadHistory(b, id, 0, 0); len(got) != n || (n > 0 && got[0].Role != "user") {
				t.Errorf("history of %s: %d messages, want %d", id, len(got), n)
			}
		}
		if got := projection.ReadHistory(b, "ses_none", 0, 0); got != nil {
			t.Errorf("history of an unknown session: %v", got)
		}
		return nil
	})
	l.ViewProjection(projection.Snapshots{}, func(b ledger.Bucket) error {
		for id, n := range snaps {
			if got := projection.ReadSnapshots(b, "session", id); len(got) != n {
				t.Errorf("snapshots of %q: %d, want %d", id, len(got), n)
			}
		}
		if got := projection.ReadSnapshots(b, "path", "billing/totals.go"); len(got) < 2 {
			t.Errorf("snapshots of billing/totals.go: %v", got)
		}
		return nil
	})
	l.ViewProjection(projection.Approvals{}, func(b ledger.Bucket) error {
		if got := projection.ReadApprovals(b, false); len(got) != approvals || approvals == 0 {
			t.Errorf("%d approvals, entries %d", len(got), approvals)
		}
		return nil
	})
	l.ViewProjection(projection.Metrics{}, func(b ledger.Bucket) error {
		var n uint64
		for _, c := range projection.ReadMetrics(b) {
			if c.Key[0] == "verdict" {
				n += c.Value
			}
		}
		if n != uint64(verdicts) {
			t.Errorf("metrics count %d verdicts, entries %d", n, verdicts)
		}
		return nil
	})
}
