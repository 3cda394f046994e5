package event_test

import (
	"strings"
	"testing"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// TestCausality_KeepsNoEntryBytes: CheckOrder's entries share bytes that
// are reused after the call (VerifyOptions.CheckOrder), so what the rules
// keep of one must be a copy: each entry's bytes are overwritten with
// another call's once checked (its verdict "allow" with "block"), and the
// calls still verify.
func TestCausality_KeepsNoEntryBytes(t *testing.T) {
	entries := [][3]string{
		{"s", event.TypeToolProposed, `{"call_id":"c1","message_id":"m1","tool":"read_file","arguments":"{}","action_hash":"` + hashA + `","mutating":false}`},
		{"s", event.TypeShieldVerdict, `{"call_id":"c1","decision":"allow","tier":0,"rule":"r","action_hash":"` + hashA + `"}`},
		{"s", event.TypeExecStarted, `{"call_id":"c1","tool":"read_file","action_hash":"` + hashA + `"}`},
		{"s", event.TypeExecCompleted, `{"call_id":"c1","tool":"read_file","action_hash":"` + hashA + `"}`},
	}
	opts := event.StrictOptions()
	for i, x := range entries {
		data := []byte(x[2])
		e := ledger.Entry{Seq: uint64(i + 1), Session: x[0], Type: x[1], Data: data}
		if err := opts.CheckOrder(&e); err != nil {
			t.Fatalf("entry %d: %v", i+1, err)
		}
		r := strings.NewReplacer("c1", "c9", "m1", "m9", "read_file", "edit_file", "allow", "block", hashA, hashB)
		copy(data, r.Replace(x[2]))
	}
}

// TestCausality_NoteAbout: an annotation names an entry before it; one
// about itself or a later entry does not verify strictly.
func TestCausality_NoteAbout(t *testing.T) {
	for _, tc := range []struct {
		about   string
		wantErr bool
	}{{"", false}, {`,"about":3`, false}, {`,"about":4`, true}, {`,"about":9`, true}} {
		opts := event.StrictOptions()
		data := `{"author":"a","text":"t"` + tc.about + `}`
		if err := event.Check(event.TypeNote, []byte(data)); err != nil {
			t.Fatalf("%s: payload: %v", data, err)
		}
		e := ledger.Entry{Seq: 4, Session: "s", Type: event.TypeNote, Data: []byte(data)}
		if err := opts.CheckOrder(&e); (err != nil) != tc.wantErr {
			t.Errorf("%s: %v, want error %v", data, err, tc.wantErr)
		}
	}
}
