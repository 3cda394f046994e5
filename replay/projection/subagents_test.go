package projection_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/replay/projection"
	"github.com/opx-dev/opx/replay/replaytest"
)

// subAgentLedger is the sub-agent scene opened with every projection.
func subAgentLedger(t *testing.T) *ledger.Ledger {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ledger.db")
	replaytest.Write(t, path, replaytest.SubAgentScene())
	l, err := ledger.Open(path, ledger.Options{NoSync: true, Projections: projection.All()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// TestSubAgents_Projections: sessions count the session's sub-agents by
// how they ended, metrics count them and their share, the approval and
// the snapshot name the sub-agent, and a rebuild is byte-identical.
func TestSubAgents_Projections(t *testing.T) {
	l := subAgentLedger(t)
	l.ViewProjection(projection.Sessions{}, func(b ledger.Bucket) error {
		s, ok := projection.ReadSession(b, replaytest.Session)
		want := projection.SubAgentCounts{Spawned: 4, Completed: 1, Failed: 1, Cancelled: 1, TimedOut: 1}
		if !ok || s.SubAgents != want || s.SubAgents.Running() != 0 || s.Messages != 2 {
			t.Errorf("session %+v, want sub-agents %+v", s, want)
		}
		return nil
	})
	l.ViewProjection(projection.Metrics{}, func(b ledger.Bucket) error {
		got := map[string]uint64{}
		for _, c := range projection.ReadMetrics(b) {
			got[strings.Join(c.Key, " ")] = c.Value
		}
		for k, v := range map[string]uint64{"subagent spawned": 4, "subagent completed": 1, "subagent failed": 1, "subagent cancelled": 1,
			"subagent timed_out": 1, "subagent_failed crashed": 1, "subagent_verdict allow": 1, "subagent_verdict escalate": 1,
			"subagent_verdict block": 1, "subagent_llm calls": 4, "subagent_llm input_tokens": 100 + 120 + 150 + 160,
			"subagent_tool calls": 2, "llm m-1 calls": 7, "tool read_file calls": 1, "verdict -1 subagent:not-granted block": 1} {
			if got[k] != v {
				t.Errorf("metric %q = %d, want %d", k, got[k], v)
			}
		}
		return nil
	})
	l.ViewProjection(projection.Approvals{}, func(b ledger.Bucket) error {
		a := projection.ReadApprovals(b, replaytest.Session, false)
		if len(a) != 1 || a[0].SubAgentID != replaytest.SubB || !a[0].Approved {
			t.Errorf("approvals %+v", a)
		}
		return nil
	})
	l.ViewProjection(projection.Snapshots{}, func(b ledger.Bucket) error {
		s := projection.ReadSnapshots(b, replaytest.Session, "")
		if len(s) != 1 || s[0].SubAgentID != replaytest.SubB || s[0].ExecSeq == 0 || s[0].Status() != "completed" {
			t.Errorf("snapshots %+v", s)
		}
		return nil
	})
	before := digests(t, l)
	if _, err := l.RebuildProjections(); err != nil {
		t.Fatal(err)
	}
	if after := digests(t, l); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("rebuild changed buckets:\n%v\n%v", before, after)
	}
}
