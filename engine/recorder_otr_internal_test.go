package engine

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opx-dev/opx/engine/otr"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// TestOTR_Recorder: entries of an off-the-record session are withheld,
// tokens included; a payload that does not validate is refused without
// saying why (the reason may quote content); a type that is never a
// session's is refused; a recorder of a later engine (same ledger) finds
// the session off the record in the projection, withholds under a fresh
// key, and has no conversation to offer.
func TestOTR_Recorder(t *testing.T) {
	ctx := context.Background()
	l, err := ledger.Create(filepath.Join(t.TempDir(), "ledger.db"), ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	r := NewRecorder(l)
	if err := r.otr.Start("s1"); err != nil {
		t.Fatal(err)
	}
	for _, p := range []event.Payload{
		&event.SessionCreated{Mode: otr.Mode, Title: "SECRET title"},
		&event.ClientMessage{MessageID: "m1", Content: "SECRET message"},
	} {
		if _, err := r.Record(ctx, ledger.Sync, "s1", p); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Token(ctx, "s1", "", "m1", "SECRET token"); err != nil {
		t.Fatal(err)
	}
	// A late token about m1 outside any session.
	if err := r.Token(ctx, "", "", "m1", "SECRET late"); err != nil {
		t.Fatal(err)
	}
	if err := r.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	// A sub-agent's crash is recorded outside any session, with its
	// stderr.
	if _, err := r.Record(ctx, ledger.Sync, "s1", &event.SubAgentSpawned{SubAgentID: "sub_1", ParentCallID: "c", Task: "SECRET task", TaskSize: 11,
		Tools: []string{}, MaxRounds: 1, TimeoutMS: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Record(ctx, ledger.Sync, "", &event.AgentCrashed{AgentID: "a", SubAgentID: "sub_1", Detail: "died", Stderr: "SECRET stderr"}); err != nil {
		t.Fatal(err)
	}
	_, err = r.Record(ctx, ledger.Sync, "s1", &event.Snapshot{CallID: "c", Tool: "write_file", Kind: event.KindFiles,
		Files: []event.FileState{{Path: "SECRET path", State: event.StateFile}}})
	if !errors.Is(err, event.ErrInvalidPayload) || strings.Contains(err.Error(), "SECRET") {
		t.Errorf("invalid payload: %v", err)
	}
	if _, err := r.Record(ctx, ledger.Sync, "s1", &event.EngineStopped{Reason: "x"}); !errors.Is(err, event.ErrNotWithholdable) {
		t.Errorf("engine.stopped in an OTR session: %v", err)
	}
	if h, err := r.otr.Conversation("s1"); err != nil || len(h) != 1 || h[0].Content != "SECRET message" {
		t.Errorf("conversation %v, %v", h, err)
	}

	// A later engine.
	r2 := NewRecorder(l)
	if !r2.otr.IsOTR("s1") {
		t.Fatal("a later engine does not see s1 as off the record")
	}
	if _, err := r2.otr.Conversation("s1"); !errors.Is(err, otr.ErrGone) {
		t.Errorf("conversation after a restart: %v", err)
	}
	if _, err := r2.Record(ctx, ledger.Sync, "s1", &event.ApprovalResolved{ApprovalID: "a", CallID: "c", By: "engine", Reason: "SECRET reason"}); err != nil {
		t.Fatal(err)
	}
	if _, err := r2.Record(ctx, ledger.Sync, "normal", &event.ClientMessage{MessageID: "m2", Content: "in clear"}); err != nil {
		t.Fatal(err)
	}
	h, _ := l.Head()
	var clear int
	l.Range(0, h.Seq, func(e ledger.Entry) error {
		if bytes.Contains(e.Data, []byte("SECRET")) {
			t.Errorf("entry %d %s: %s", e.Seq, e.Type, e.Data)
		}
		if bytes.Contains(e.Data, []byte("in clear")) {
			clear++
		}
		return nil
	})
	if clear != 1 || h.Seq < 5 {
		t.Errorf("%d normal entries in clear, head %d", clear, h.Seq)
	}
}
