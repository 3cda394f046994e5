package replay_test

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/opx-dev/opx/chronicle"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/ledgertest"
	"github.com/opx-dev/opx/replay"
	"github.com/opx-dev/opx/replay/projection"
)

// outcomeCase is one executed call and how every view must say it ended.
type outcomeCase struct {
	id, tool string
	snapshot *event.Snapshot
	end      event.Payload
	outcome  string   // replay's
	status   string   // the snapshots projection's
	changed  []string // what the call changed
}

var absent = event.FileState{Path: "invoice.sh", State: event.StateAbsent}

// outcomeCases hold a ledger written before exec.completed had its failed
// field (a tool's error recorded as exit 1), the engine's form today, an
// exec.failed, a command that exited non-zero, and two that worked.
func outcomeCases() []outcomeCase {
	files := func(id, tool string, f ...event.FileState) *event.Snapshot {
		return &event.Snapshot{CallID: id, Tool: tool, Kind: event.KindFiles, Files: f}
	}
	manifest := (&chronicle.Tree{}).Encode()
	ws := func(id string) *event.Snapshot {
		return &event.Snapshot{CallID: id, Tool: "execute_command", Kind: event.KindWorkspace, Files: []event.FileState{},
			ManifestBlob: ledger.Sum(manifest).String(), ManifestSize: int64(len(manifest))}
	}
	newTxt := ledger.Sum([]byte("new\n")).String()
	return []outcomeCase{
		{"old-edit", "edit_file", files("old-edit", "edit_file", absent),
			&event.ExecCompleted{CallID: "old-edit", Tool: "edit_file", Result: "edit_file: invoice.sh: no such file or directory", Size: 48, ExitCode: 1,
				Post: []event.PostState{{Path: "invoice.sh", Absent: true}}},
			replay.OutcomeFailed, "failed", nil},
		{"old-read", "read_file", nil,
			&event.ExecCompleted{CallID: "old-read", Tool: "read_file", Result: "read_file: invoice.sh: no such file or directory", Size: 48, ExitCode: 1, Post: []event.PostState{}},
			replay.OutcomeFailed, "", nil},
		{"new-edit", "edit_file", files("new-edit", "edit_file", absent),
			&event.ExecCompleted{CallID: "new-edit", Tool: "edit_file", Result: "edit_file: invoice.sh: no such file or directory", Size: 48, ExitCode: 1, Failed: true,
				Post: []event.PostState{{Path: "invoice.sh", Absent: true}}},
			replay.OutcomeFailed, "failed", nil},
		{"no-start", "execute_command", ws("no-start"),
			&event.ExecCompleted{CallID: "no-start", Tool: "execute_command", Result: "execute_command: cwd: missing: no such file or directory", Size: 55,
				ExitCode: 1, Failed: true, Post: []event.PostState{}},
			replay.OutcomeFailed, "failed", nil},
		{"gone", "delete_file", files("gone", "delete_file", absent),
			&event.ExecFailed{CallID: "gone", Tool: "delete_file", Error: "no such file"},
			replay.OutcomeFailed, "failed", nil},
		{"tests", "execute_command", ws("tests"),
			&event.ExecCompleted{CallID: "tests", Tool: "execute_command", Result: "FAIL\n[exit status 1]", Size: 21, ExitCode: 1, Post: []event.PostState{}},
			replay.OutcomeExited, "ran, exit 1", nil},
		{"git", "git_status", nil,
			&event.ExecCompleted{CallID: "git", Tool: "git_status", Result: "fatal: not a git repository\n[exit status 128]", Size: 44, ExitCode: 128, Post: []event.PostState{}},
			replay.OutcomeExited, "", nil},
		{"write", "write_file", files("write", "write_file", event.FileState{Path: "new.txt", State: event.StateAbsent}),
			&event.ExecCompleted{CallID: "write", Tool: "write_file", Result: "wrote 4 bytes", Size: 13, Post: []event.PostState{{Path: "new.txt", Hash: newTxt, Mode: 0o644}}},
			replay.OutcomeCompleted, "completed", []string{"new.txt"}},
	}
}

// TestOutcome_EveryViewAgrees: the timeline, its totals, the metrics and
// snapshots projections and chronicle.Index say the same of each call, as
// event.ExecOutcome defines it, for ledgers written before the failed
// field (a file tool's error is exit 1) and after; a failed call that
// changed nothing changed nothing in every view.
func TestOutcome_EveryViewAgrees(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	clock := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	l, err := ledger.Create(path, ledger.Options{NoSync: true, Projections: projection.All(), Now: func() time.Time {
		clock = clock.Add(time.Millisecond)
		return clock
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		l.Close()
		ledgertest.MustVerify(t, path, event.StrictOptions())
	})
	r := &recorder{t: t, l: l, seq: map[string]uint64{}}
	r.add("", handSession, &event.SessionCreated{Mode: "normal", Title: "outcomes"})
	r.add("", handSession, &event.ClientMessage{MessageID: "m1", Content: "run the tests and fix what fails"})
	cases := outcomeCases()
	for _, c := range cases {
		args := `{"x":"` + c.id + `"}`
		action := r.call(c.id, "m1", c.id, c.tool, args, c.snapshot != nil)
		r.verdict("", c.id, action, event.Allow, 0, "allow-all", "test")
		var blobs [][]byte
		if c.snapshot != nil {
			if c.snapshot.Kind == event.KindWorkspace {
				blobs = append(blobs, (&chronicle.Tree{}).Encode())
			}
			r.add(c.id+".snapshot", handSession, c.snapshot, blobs...)
		}
		if ec, ok := c.end.(*event.ExecCompleted); ok {
			ec.Size = int64(len(ec.Result))
		}
		r.add("", handSession, &event.ExecStarted{CallID: c.id, Tool: c.tool, ActionHash: action})
		r.add(c.id+".end", handSession, c.end)
		r.result("", c.id, "error", c.outcome != replay.OutcomeCompleted)
	}

	tl := mustBuild(t, l, handSession, replay.Options{})
	failed, exited, completed := 0, 0, 0
	for _, c := range cases {
		tc := callByID(t, tl, c.id)
		if tc.Outcome != c.outcome || tc.Exec.Status != map[string]string{replay.OutcomeFailed: event.ExecError,
			replay.OutcomeExited: event.ExecExited, replay.OutcomeCompleted: event.ExecOK}[c.outcome] {
			t.Errorf("%s: outcome %s, status %s, want %s", c.id, tc.Outcome, tc.Exec.Status, c.outcome)
		}
		if !slices.Equal(tc.Exec.Changed, nonNil(c.changed)) {
			t.Errorf("%s: changed %v, want %v", c.id, tc.Exec.Changed, c.changed)
		}
		switch c.outcome {
		case replay.OutcomeFailed:
			failed++
		case replay.OutcomeExited:
			exited++
		default:
			completed++
		}
	}
	if tt := tl.Totals; tt.Failed != failed || tt.Exited != exited || tt.Completed != completed || tt.Executed != len(cases) {
		t.Errorf("totals %+v, want %d failed, %d exited, %d completed", tt, failed, exited, completed)
	}
	changes, err := replay.Changes(l, tl, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, fc := range changes {
		if fc.Path != "" && fc.Path != "new.txt" && fc.Basis != replay.BasisNone {
			t.Errorf("Changes lists %s of call %s, which changed nothing", fc.Path, fc.CallID)
		}
	}

	x, err := chronicle.BuildIndex(l)
	if err != nil {
		t.Fatal(err)
	}
	err = l.ViewProjection(projection.Snapshots{}, func(b ledger.Bucket) error {
		for _, s := range projection.ReadSnapshots(b, handSession, "") {
			var c outcomeCase
			for _, o := range cases {
				if o.id == s.CallID {
					c = o
				}
			}
			if s.Status() != c.status || !s.ChangesKnown && c.status != "failed" || !slices.Equal(s.Changed, c.changed) {
				t.Errorf("snapshot of %s: status %q changed %v (known %v), want %q %v", c.id, s.Status(), s.Changed, s.ChangesKnown, c.status, c.changed)
			}
			is, err := x.Get(s.Seq)
			if err != nil {
				t.Fatal(err)
			}
			ch, _ := is.Changed()
			if is.Exec.Outcome != tc(tl, c.id).Exec.Status || !slices.Equal(ch, c.changed) {
				t.Errorf("index, snapshot of %s: outcome %q changed %v", c.id, is.Exec.Outcome, ch)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = l.ViewProjection(projection.Metrics{}, func(b ledger.Bucket) error {
		got := map[string]uint64{}
		for _, c := range projection.ReadMetrics(b) {
			if c.Key[0] == "tool" {
				got[c.Key[1]+"/"+c.Key[2]] = c.Value
			}
		}
		want := map[string]uint64{}
		for _, c := range cases {
			switch c.outcome {
			case replay.OutcomeFailed:
				want[c.tool+"/failed"]++
			case replay.OutcomeExited:
				want[c.tool+"/exited"]++
			}
		}
		for k, n := range want {
			if got[k] != n {
				t.Errorf("metrics %s = %d, want %d", k, got[k], n)
			}
		}
		for k, n := range got {
			if (len(k) > 7 && (k[len(k)-7:] == "/failed" || k[len(k)-7:] == "/exited")) && want[k] != n {
				t.Errorf("metrics %s = %d, want %d", k, n, want[k])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func tc(tl *replay.Timeline, id string) *replay.ToolCall {
	for _, c := range tl.ToolCalls() {
		if c.CallID == id {
			return c
		}
	}
	return nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
