package projection_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/opx-dev/opx/chronicle"
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
			// A sub-agent's answer is its parent's tool result, not a
			// message of the session.
			if f := ledger.Fields(e.Data, "subagent_id"); len(f[0]) <= 2 {
				messages[e.Session]++
			}
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
			if id == "" {
				continue // "" selects every session
			}
			if got := projection.ReadSnapshots(b, id, ""); len(got) != n {
				t.Errorf("snapshots of %q: %d, want %d", id, len(got), n)
			}
		}
		if got := projection.ReadSnapshots(b, "", "billing/totals.go"); len(got) < 2 {
			t.Errorf("snapshots of billing/totals.go: %v", got)
		}
		return nil
	})
	l.ViewProjection(projection.Approvals{}, func(b ledger.Bucket) error {
		if got := projection.ReadApprovals(b, "", false); len(got) != approvals || approvals == 0 {
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

// TestSnapshots_MatchChronicleIndex: the snapshots projection says of
// every snapshot what chronicle.Index (the fold rollback works from) says
// (how its call ended, rollbacks, retention), for all of them and
// filtered by session and by path. The sample holds files and workspace
// snapshots, a rollback (and the snapshot it took) and a prune.
func TestSnapshots_MatchChronicleIndex(t *testing.T) {
	l := sample(t)
	x, err := chronicle.BuildIndex(l)
	if err != nil {
		t.Fatal(err)
	}
	want := func(s *chronicle.Snapshot) projection.SnapshotInfo {
		w := projection.SnapshotInfo{Seq: s.Seq, TS: s.TS, Session: s.Session, SubAgentID: s.SubAgentID, CallID: s.CallID, Tool: s.Tool, Kind: s.Kind,
			Paths: s.Paths(), RestoredBy: s.RestoredBy, PrunedBy: s.Pruned}
		if s.TakenBy != nil {
			w.TakenBy = s.TakenBy.Seq
		}
		if x := s.Exec; x != nil {
			w.ExecSeq, w.Outcome, w.ExitCode, w.Failed, w.DiffError = x.Seq, x.Outcome, int64(x.ExitCode), x.Failed, x.DiffError
		}
		w.Changed, w.ChangesKnown = s.Changed()
		return w
	}
	var kinds, statuses = map[string]int{}, map[string]int{}
	var restored, pruned int
	err = l.ViewProjection(projection.Snapshots{}, func(b ledger.Bucket) error {
		got := projection.ReadSnapshots(b, "", "")
		if len(got) != len(x.Snapshots()) {
			t.Fatalf("%d snapshots, the index has %d", len(got), len(x.Snapshots()))
		}
		for i, s := range x.Snapshots() {
			if w := want(s); !reflect.DeepEqual(got[i], w) {
				t.Errorf("snapshot %d:\nprojection %+v\nindex      %+v", s.Seq, got[i], w)
			}
			kinds[s.Kind]++
			statuses[got[i].Status()]++
			restored += len(got[i].RestoredBy)
			if got[i].PrunedBy != 0 {
				pruned++
			}
			for _, p := range s.Paths() {
				var n int
				for _, o := range x.Snapshots() {
					if o.Touches(p) {
						n++
					}
				}
				if g := projection.ReadSnapshots(b, "", p); len(g) != n {
					t.Errorf("path %s: %d snapshots, the index %d", p, len(g), n)
				}
				if g := projection.ReadSnapshots(b, s.Session, p); len(g) == 0 || g[len(g)-1].Session != s.Session {
					t.Errorf("session %s and path %s: %v", s.Session, p, g)
				}
			}
			if g := projection.ReadSnapshots(b, s.Session, ""); s.Session != "" && len(g) != len(x.Session(s.Session)) {
				t.Errorf("session %s: %d snapshots, the index %d", s.Session, len(g), len(x.Session(s.Session)))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if kinds["files"] == 0 || kinds["workspace"] == 0 || restored == 0 || pruned == 0 || statuses["completed"] == 0 || len(statuses) < 2 {
		t.Errorf("the sample no longer covers every case: kinds %v, statuses %v, %d restored, %d pruned", kinds, statuses, restored, pruned)
	}
}

// TestTaint_FoldsInTheFile: the taint projection folds in the ledger file
// as entries commit (reading and writing by key: a fold that used a
// cursor would be marked broken and every read would refold the ledger),
// keeps a sensitive call once it started, drops one that never ran, and
// keeps at most MaxTaint per session.
func TestTaint_FoldsInTheFile(t *testing.T) {
	l, err := ledger.Create(filepath.Join(t.TempDir(), "l.db"), ledger.Options{NoSync: true, Projections: projection.All()})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx := context.Background()
	add := func(p event.Payload) {
		t.Helper()
		if _, err := l.Append(ctx, ledger.Sync, event.MustRecord("s1", p)); err != nil {
			t.Fatal(err)
		}
	}
	hash := strings.Repeat("ab", 32)
	for i := 0; i < projection.MaxTaint+3; i++ {
		id := fmt.Sprint("c", i)
		add(&event.ToolProposed{CallID: id, Tool: "read_file", Arguments: "{}", ActionHash: hash, Sensitive: []string{"a secret " + id}})
		add(&event.ExecStarted{CallID: id, Tool: "read_file", ActionHash: hash})
	}
	add(&event.ToolProposed{CallID: "never", Tool: "read_file", Arguments: "{}", ActionHash: hash, Sensitive: []string{"not run"}})
	var got []event.Taint
	if err := l.ViewProjection(projection.Taint{}, func(b ledger.Bucket) error {
		got = projection.ReadTaint(b, "s1")
		return nil
	}); err != nil {
		t.Fatalf("the file's taint projection: %v", err)
	}
	if len(got) != projection.MaxTaint || got[0].CallID != "c0" || got[0].What != "a secret c0" {
		t.Errorf("taint %+v, want the first %d calls that ran", got, projection.MaxTaint)
	}
}

// TestTaint_ChangedFilesCountApart: build or test files a session changed
// (projection.ChangedPrefix) are kept with their own bound, so that many
// of them cannot crowd out a sensitive read that comes later.
func TestTaint_ChangedFilesCountApart(t *testing.T) {
	l, err := ledger.Create(filepath.Join(t.TempDir(), "l.db"), ledger.Options{NoSync: true, Projections: projection.All()})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx := context.Background()
	add := func(p event.Payload) {
		t.Helper()
		if _, err := l.Append(ctx, ledger.Sync, event.MustRecord("s1", p)); err != nil {
			t.Fatal(err)
		}
	}
	hash := strings.Repeat("ab", 32)
	for i := 0; i < projection.MaxTaint+2; i++ {
		id := fmt.Sprint("w", i)
		add(&event.ToolProposed{CallID: id, Tool: "write_file", Arguments: "{}", ActionHash: hash, Sensitive: []string{projection.ChangedPrefix + "/ws/" + id + "/Makefile — Makefile, run by make"}})
		add(&event.ExecStarted{CallID: id, Tool: "write_file", ActionHash: hash})
	}
	add(&event.ToolProposed{CallID: "r", Tool: "read_file", Arguments: "{}", ActionHash: hash, Sensitive: []string{"/ws/.env (credentials)"}})
	add(&event.ExecStarted{CallID: "r", Tool: "read_file", ActionHash: hash})
	var got []event.Taint
	if err := l.ViewProjection(projection.Taint{}, func(b ledger.Bucket) error {
		got = projection.ReadTaint(b, "s1")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != projection.MaxTaint+1 || got[len(got)-1].CallID != "r" {
		t.Errorf("taint %+v: want %d changed files and the read after them", got, projection.MaxTaint)
	}
}

// TestTaint_EveryEntryEachFileOnce: a call naming two changed files keeps
// both (not only the first), a file changed again is held once (editing
// one file many times does not use up the bound: a different file
// changed after that is still kept), and KeepTaint, the same rule over a
// list (opx shield eval), keeps exactly what the fold keeps.
func TestTaint_EveryEntryEachFileOnce(t *testing.T) {
	l, err := ledger.Create(filepath.Join(t.TempDir(), "l.db"), ledger.Options{NoSync: true, Projections: projection.All()})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx := context.Background()
	hash := strings.Repeat("ab", 32)
	conftest := projection.ChangedPrefix + "/ws/tests/conftest.py — conftest.py, loaded by pytest"
	makefile := projection.ChangedPrefix + "/ws/Makefile — Makefile, run by make"
	build := projection.ChangedPrefix + "/ws/build.rs — build.rs, run by cargo"
	calls := [][]string{{"/ws/.env (credentials)", conftest, makefile}}
	for range projection.MaxTaint + 4 {
		calls = append(calls, []string{conftest})
	}
	calls = append(calls, []string{build})
	var want []event.Taint
	for i, whats := range calls {
		id := fmt.Sprint("c", i)
		for _, p := range []event.Payload{
			&event.ToolProposed{CallID: id, Tool: "execute_command", Arguments: "{}", ActionHash: hash, Sensitive: whats},
			&event.ExecStarted{CallID: id, Tool: "execute_command", ActionHash: hash},
		} {
			ap, err := l.Append(ctx, ledger.Sync, event.MustRecord("s1", p))
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := p.(*event.ToolProposed); ok {
				want = projection.KeepTaint(want, event.Taint{Seq: ap[0].Seq, CallID: id}, whats)
			}
		}
	}
	var got []event.Taint
	if err := l.ViewProjection(projection.Taint{}, func(b ledger.Bucket) error {
		got = projection.ReadTaint(b, "s1")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var whats []string
	for _, g := range got {
		whats = append(whats, g.What)
	}
	if len(whats) != 4 || whats[1] != conftest || whats[2] != makefile || whats[3] != build {
		t.Fatalf("taint %q: want the read, conftest.py and the Makefile of the first call, then build.rs", whats)
	}
	if len(want) != len(got) {
		t.Fatalf("KeepTaint keeps %d entries, the fold %d", len(want), len(got))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("entry %d: fold %+v, KeepTaint %+v", i, got[i], want[i])
		}
	}
}
