package tier2_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/engine/llm"
	"github.com/opx-dev/opx/engine/tier2"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/ledgertest"
)

// TestCountTier2Calls: only today's tier 2 requests count, found by a
// binary search over a ledger whose first entries are from earlier days.
func TestCountTier2Calls(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	l, err := ledger.Create(path, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		l.Close()
		ledgertest.MustVerify(t, path, event.StrictOptions())
	})
	rec := engine.NewRecorder(l)
	ctx := context.Background()
	req := func(id string) {
		body := []byte(id)
		if _, err := rec.Record(ctx, ledger.Sync, "s", &event.LLMRequest{RequestID: id, Provider: "scripted", Model: "m",
			Blob: ledger.Sum(body).String(), Size: int64(len(body))}, body); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 5; i++ {
		req("tier2_a")
		req("req_1")
	}
	now := time.Now().UTC()
	if n, err := tier2.CountCallsForTest(l, tier2.DayStartForTest(now)); err != nil || n != 5 {
		t.Errorf("today: %d, %v; want 5", n, err)
	}
	if n, err := tier2.CountCallsForTest(l, now.Add(time.Hour)); err != nil || n != 0 {
		t.Errorf("from an hour ahead: %d, %v; want 0", n, err)
	}
	e, err := tier2.NewLLMEvaluator(tier2.LLMEvaluatorConfig{Recorder: rec, Provider: llm.NewScripted(&llm.Transcript{Model: "m"}), Budget: 7})
	if err != nil {
		t.Fatal(err)
	}
	if used, budget := e.Used(); used != 5 || budget != 7 {
		t.Errorf("used %d of %d, want 5 of 7", used, budget)
	}
	// The next UTC day starts a new count.
	e.SetNowForTest(func() time.Time { return now.Add(24 * time.Hour) })
	if used, _ := e.Used(); used != 0 {
		t.Errorf("next day: used %d", used)
	}
}
