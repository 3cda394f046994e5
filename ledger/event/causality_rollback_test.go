package event_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// Steps of a rollback, numbered from seq 1 as TestCausality numbers them:
// the pre-snapshot is seq 1, the plan seq 2.
func plan(session string) event.Payload {
	return &event.RollbackStarted{Session: session, Workspace: "/w", PreSnapshot: 1,
		Files: []event.FileState{{Path: "a", State: "file", Mode: 0o644, Blob: h1}, {Path: "b", State: "absent"}}}
}
func outcome(session string, planSeq uint64, files ...string) event.Payload {
	return &event.Rollback{Session: session, Plan: planSeq, PreSnapshot: 1, Files: files,
		Post: []event.PostState{{Path: "a", Hash: h1, Mode: 0o644}, {Path: "b", Absent: true}}}
}
func engineStarted() event.Payload {
	return &event.EngineStarted{Version: "t", PID: 1, Workspace: "/w", ConfigHash: h1, Policy: "p", PolicyHash: h2, Provider: "scripted", Model: "m"}
}

func TestCausality_Rollback(t *testing.T) {
	pre := snapshot("rollback-session-s")
	tests := []struct {
		name    string
		steps   []event.Payload
		failAt  int // index of the step that breaks a rule; -1 for none
		message string
		open    []uint64 // plans End reports
	}{
		{"plan then outcome", []event.Payload{pre, plan("s"), outcome("s", 2, "a", "b")}, -1, "", nil},
		{"interrupted, recovered before the engine starts", []event.Payload{pre, plan("s"),
			&event.Rollback{Session: "s", Plan: 2, PreSnapshot: 1, Files: []string{}, Interrupted: true, Error: "interrupted"}, engineStarted()}, -1, "", nil},
		{"plan with no outcome", []event.Payload{pre, plan("s")}, -1, "", []uint64{2}},
		{"engine starts over an open plan", []event.Payload{pre, plan("s"), engineStarted()}, 2, "had no outcome", []uint64{2}},
		{"outcome without plan, before any plan (an older engine)", []event.Payload{pre, outcome("s", 0, "a")}, -1, "", nil},
		{"outcome without plan after a plan", []event.Payload{pre, plan("s"), outcome("s", 2, "a", "b"), outcome("s", 0, "a")}, 3, "has no plan", nil},
		{"outcome names a plan that is not one", []event.Payload{pre, plan("s"), outcome("s", 1, "a")}, 2, "not a rollback plan", []uint64{2}},
		{"two outcomes for one plan", []event.Payload{pre, plan("s"), outcome("s", 2, "a"), outcome("s", 2, "a")}, 3, "not a rollback plan", nil},
		{"outcome of another target", []event.Payload{pre, plan("s"), outcome("t", 2, "a")}, 2, "differs from its plan", nil},
		{"outcome restores an unplanned path", []event.Payload{pre, plan("s"), outcome("s", 2, "c")}, 2, "does not name", nil},
		{"plan after its pre-snapshot only", []event.Payload{&event.RollbackStarted{Session: "s", Workspace: "/w", PreSnapshot: 5,
			Files: []event.FileState{{Path: "b", State: "absent"}}}}, 0, "does not precede", []uint64{1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := event.NewCausality()
			for i, p := range tt.steps {
				data, err := ledger.MarshalCanonical(p)
				if err != nil {
					t.Fatal(err)
				}
				e := ledger.Entry{Seq: uint64(i + 1), Type: p.Type(), Data: data}
				err = c.Check(&e)
				switch {
				case i == tt.failAt && (err == nil || !strings.Contains(err.Error(), tt.message)):
					t.Errorf("step %d (%s): err = %v, want one saying %q", i, p.Type(), err, tt.message)
				case i != tt.failAt && err != nil:
					t.Errorf("step %d (%s): unexpected %v", i, p.Type(), err)
				}
			}
			end := c.End()
			if len(end) != len(tt.open) {
				t.Fatalf("End = %v, want failures at %v", end, tt.open)
			}
			for i, f := range end {
				if f.Seq != tt.open[i] || f.Kind != ledger.KindCausality || !strings.Contains(f.Detail, "no outcome") {
					t.Errorf("End[%d] = %v, want a causality failure at %d", i, f, tt.open[i])
				}
			}
		})
	}
}

func TestCheck_RollbackStarted_Rejects(t *testing.T) {
	for _, tt := range []struct{ name, data string }{
		{"no files", `{"session":"s","workspace":"/w","pre_snapshot":1,"forced":false,"files":[]}`},
		{"no workspace", `{"session":"s","workspace":"","pre_snapshot":1,"forced":false,"files":[{"path":"a","state":"absent"}]}`},
		{"no pre-snapshot", `{"session":"s","workspace":"/w","pre_snapshot":0,"forced":false,"files":[{"path":"a","state":"absent"}]}`},
		{"both targets", `{"session":"s","snapshot":3,"workspace":"/w","pre_snapshot":1,"forced":false,"files":[{"path":"a","state":"absent"}]}`},
		{"unsorted", `{"session":"s","workspace":"/w","pre_snapshot":1,"forced":false,"files":[{"path":"b","state":"absent"},{"path":"a","state":"absent"}]}`},
		{"duplicate", `{"session":"s","workspace":"/w","pre_snapshot":1,"forced":false,"files":[{"path":"a","state":"absent"},{"path":"a","state":"absent"}]}`},
		{"omitted content", `{"session":"s","workspace":"/w","pre_snapshot":1,"forced":false,"files":[{"path":"a","state":"file","hash":"` + h1 + `","omitted":"big"}]}`},
		{"interrupted without plan", ``},
	} {
		t.Run(tt.name, func(t *testing.T) {
			typ, data := event.TypeRollbackStarted, tt.data
			if data == "" {
				typ, data = event.TypeRollback, `{"session":"s","files":[],"pre_snapshot":1,"forced":false,"interrupted":true}`
			}
			if err := event.Check(typ, []byte(data)); err == nil {
				t.Errorf("Check(%s) = nil, want a refusal", data)
			}
		})
	}
}

// TestStrictOptions_OpenRollbackPlan: strict verification of a real ledger
// whose last rollback plan has no outcome fails with a causality failure at
// the plan's seq, and passes once the outcome is appended.
func TestStrictOptions_OpenRollbackPlan(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	l, err := ledger.Create(path, ledger.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	app := func(p event.Payload) uint64 {
		t.Helper()
		a, err := l.Append(context.Background(), ledger.Sync, event.MustRecord("", p))
		if err != nil {
			t.Fatal(err)
		}
		return a[0].Seq
	}
	pre := app(snapshot("rollback-session-s"))
	p := &event.RollbackStarted{Session: "s", Workspace: "/w", PreSnapshot: pre, Files: []event.FileState{{Path: "b", State: "absent"}}}
	planSeq := app(p)
	rep, err := l.Verify(event.StrictOptions())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Failures) != 1 || rep.Failures[0].Seq != planSeq || rep.Failures[0].Kind != ledger.KindCausality {
		t.Fatalf("open plan: failures = %v, want one causality failure at %d", rep.Failures, planSeq)
	}
	app(&event.Rollback{Session: "s", Plan: planSeq, PreSnapshot: pre, Files: []string{}, Post: []event.PostState{{Path: "b", Absent: true}},
		Interrupted: true, Error: "interrupted"})
	if rep, err := l.Verify(event.StrictOptions()); err != nil || !rep.OK {
		t.Fatalf("after the outcome: %v %v", err, rep.Failures)
	}
}
