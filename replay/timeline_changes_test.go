package replay_test

import (
	"strings"
	"testing"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/replay"
)

// workspace is a WorkspaceReader over a map of path to content.
func workspace(files map[string]string) replay.WorkspaceReader {
	return func(p string) (event.FileState, []byte, error) {
		c, ok := files[p]
		if !ok {
			return event.FileState{Path: p, State: event.StateAbsent}, nil, nil
		}
		return event.FileState{Path: p, State: event.StateFile, Mode: 0o644, Size: int64(len(c)), Blob: hashOf(c)}, []byte(c), nil
	}
}

func changeOf(t *testing.T, cs []replay.FileChange, path string) replay.FileChange {
	t.Helper()
	for _, c := range cs {
		if c.Path == path {
			return c
		}
	}
	t.Fatalf("no change of %q in %+v", path, cs)
	return replay.FileChange{}
}

func TestChanges_HandBuilt(t *testing.T) {
	sc := buildScene(t)
	tl := mustBuild(t, sc.l, handSession, replay.Options{})
	tests := []struct {
		name      string
		now       replay.WorkspaceReader
		path      string
		basis     string
		diff      []string // substrings of the unified diff
		notes     []string // substrings of the notes
		snapshot  string
		execEntry string
	}{
		{name: "post-state content in the ledger", path: "a.txt", basis: replay.BasisRecorded,
			diff: []string{"--- a/a.txt\n+++ b/a.txt\n", "-beta\n+BETA\n"}, snapshot: "c1.snapshot", execEntry: "c1.completed"},
		{name: "post-state not recorded, no workspace", path: "c.txt", basis: replay.BasisNone,
			notes: []string{"post-state content not recorded, hash " + hashOf(madeC)}, snapshot: "c3.snapshot", execEntry: "c3.completed"},
		{name: "workspace still holds the post-state", now: workspace(map[string]string{"c.txt": madeC}), path: "c.txt",
			basis: replay.BasisWorkspaceMatch, diff: []string{"--- /dev/null\n+++ b/c.txt\n", "+made by the command\n"},
			notes: []string{"still hashes to it"}, snapshot: "c3.snapshot"},
		{name: "workspace changed since", now: workspace(map[string]string{"c.txt": "edited later\n"}), path: "c.txt",
			basis: replay.BasisWorkspaceNow, diff: []string{"+edited later\n"}, notes: []string{"not the state the tool left"}, snapshot: "c3.snapshot"},
		{name: "workspace lost the file", now: workspace(map[string]string{}), path: "c.txt", basis: replay.BasisNone,
			notes: []string{"the workspace now has absent"}, snapshot: "c3.snapshot"},
		{name: "tool failed", path: "locked.txt", basis: replay.BasisNone, notes: []string{"the tool failed (permission denied)"}, snapshot: "c7.snapshot"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs, err := replay.Changes(sc.l, tl, tt.now)
			if err != nil {
				t.Fatal(err)
			}
			if len(cs) != 3 {
				t.Errorf("%d changes, want one per changed path of the 3 snapshots: %+v", len(cs), cs)
			}
			c := changeOf(t, cs, tt.path)
			if c.Basis != tt.basis || c.Snapshot != sc.seq[tt.snapshot] || c.ExecSeq != sc.seq[tt.execEntry] && tt.execEntry != "" {
				t.Errorf("basis %s snapshot %d exec %d, want %s %d %d", c.Basis, c.Snapshot, c.ExecSeq, tt.basis, sc.seq[tt.snapshot], sc.seq[tt.execEntry])
			}
			for _, d := range tt.diff {
				if !strings.Contains(c.Unified, d) {
					t.Errorf("diff lacks %q:\n%s", d, c.Unified)
				}
			}
			if len(tt.diff) == 0 && c.Unified != "" {
				t.Errorf("a diff where none can be made:\n%s", c.Unified)
			}
			notes := strings.Join(c.Notes, "\n")
			for _, n := range tt.notes {
				if !strings.Contains(notes, n) {
					t.Errorf("notes lack %q: %q", n, notes)
				}
			}
		})
	}
}

// TestChanges_Sample reconstructs the fix session of the sample: the
// edit's pre-state was pruned by retention, the new test file diffs from
// /dev/null, and the second go test created coverage.out.
func TestChanges_Sample(t *testing.T) {
	l := importSample(t)
	session := sessionTitled(t, l, "Fix the totals bug")
	tl := mustBuild(t, l, session, replay.Options{})
	cs, err := replay.Changes(l, tl, nil)
	if err != nil {
		t.Fatal(err)
	}
	edit := changeOf(t, cs, "billing/totals.go")
	if edit.Basis != replay.BasisNone || !strings.Contains(strings.Join(edit.Notes, " "), "pre-state content pruned by retention") {
		t.Errorf("billing/totals.go: %+v, want its pruned pre-state said", edit)
	}
	created := changeOf(t, cs, "billing/totals_test.go")
	if created.Basis == replay.BasisRecorded && !strings.HasPrefix(created.Unified, "--- /dev/null\n+++ b/billing/totals_test.go\n") {
		t.Errorf("billing/totals_test.go diff:\n%s", created.Unified)
	}
	cov := changeOf(t, cs, "billing/coverage.out")
	if cov.Pre.State != event.StateAbsent || cov.Post == nil || cov.Post.Hash != hashOf("mode: set\n") {
		t.Errorf("coverage.out %+v, want created by the command", cov)
	}
}

// failingSource is a Source whose blobs are corrupt.
type failingSource struct{ replay.Source }

func (failingSource) GetBlob(h ledger.Hash) ([]byte, error) {
	return nil, &ledger.IntegrityError{Kind: ledger.KindBlobCorrupt, Detail: "blob " + h.String() + " corrupt"}
}

// TestChanges_CorruptBlob_Noted: content that fails its hash is never
// shown; the change says why, and the rest of the report can go on.
func TestChanges_CorruptBlob_Noted(t *testing.T) {
	sc := buildScene(t)
	tl := mustBuild(t, sc.l, handSession, replay.Options{})
	cs, err := replay.Changes(failingSource{sc.l}, tl, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := changeOf(t, cs, "a.txt")
	if a.Unified != "" || a.Basis != replay.BasisNone || !strings.Contains(strings.Join(a.Notes, " "), "pre-state content unreadable") {
		t.Errorf("a.txt %+v", a)
	}
}

// sessionTitled finds the session a title names.
func sessionTitled(t *testing.T, l *ledger.Ledger, title string) string {
	t.Helper()
	var id string
	err := l.Range(0, ^uint64(0), func(e ledger.Entry) error {
		if e.Type == event.TypeSessionTitled && strings.Contains(string(e.Data), title) {
			id = e.Session
		}
		return nil
	})
	if err != nil || id == "" {
		t.Fatalf("no session titled %q (%v)", title, err)
	}
	return id
}
