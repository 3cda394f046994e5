package event_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/replay/replaytest"
)

// TestCausality_SubAgent_ReviewLeavesOutEngineRule: a review fed one
// session's entries up to a point (opx replay --at) may not hold the end
// of a sub-agent an engine later stopped over; ReviewStrictOptions leaves
// that rule out, StrictOptions keeps it.
func TestCausality_SubAgent_ReviewLeavesOutEngineRule(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	seqs := replaytest.Write(t, path, replaytest.SubAgentScene())
	l, err := ledger.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	// Shown: everything before SubB's cancel, then the engine's stop.
	var shown []ledger.Entry
	l.Range(0, ^uint64(0), func(e ledger.Entry) error {
		if e.Seq < seqs["b.cancelled"] || e.Seq == seqs["engine.stopped"] {
			shown = append(shown, e)
		}
		return nil
	})
	for _, tt := range []struct {
		name string
		opts ledger.VerifyOptions
		want string
	}{
		{"strict", event.StrictOptions(), "engine.stopped while sub-agent " + replaytest.SubB},
		{"review", event.ReviewStrictOptions(), ""},
	} {
		var got []string
		for i := range shown {
			if err := tt.opts.CheckOrder(&shown[i]); err != nil {
				got = append(got, err.Error())
			}
		}
		switch {
		case tt.want == "" && len(got) != 0:
			t.Errorf("%s: %v", tt.name, got)
		case tt.want != "" && (len(got) != 1 || !strings.Contains(got[0], tt.want)):
			t.Errorf("%s: %v, want one failure saying %q", tt.name, got, tt.want)
		}
	}
}
