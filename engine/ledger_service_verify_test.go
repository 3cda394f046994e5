package engine_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/tlog"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
)

// TestLedgerService_Verify_StrippedNote: the engine's strict Verify checks
// signed checkpoints as `opx ledger verify --strict` does offline: a
// checkpoint without a note, recorded after the ledger's key, is a
// checkpoint finding (a stripped note), not a clean report.
func TestLedgerService_Verify_StrippedNote(t *testing.T) {
	r := startEngine(t)
	ctx := context.Background()
	_, vkey, err := tlog.GenerateKey(tlog.Origin(r.l.ID()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.l.Append(ctx, ledger.Sync, event.MustRecord("", &event.Key{VKey: vkey, Reason: event.KeyCreated})); err != nil {
		t.Fatal(err)
	}
	verify := func() ledger.Report {
		t.Helper()
		resp, err := opxv1.NewLedgerServiceClient(r.conn).Verify(r.ctx, &opxv1.VerifyRequest{Strict: true})
		if err != nil {
			t.Fatal(err)
		}
		var rep ledger.Report
		if err := json.Unmarshal(resp.ReportJson, &rep); err != nil {
			t.Fatal(err)
		}
		return rep
	}
	if rep := verify(); !rep.OK {
		t.Fatalf("strict verify of a ledger with a key and no checkpoint: %v", rep.Failures)
	}
	if _, err := r.l.Checkpoint(ctx, ledger.Sync); err != nil { // no signer: no note
		t.Fatal(err)
	}
	rep := verify()
	if rep.OK || len(rep.Failures) != 1 || !strings.Contains(rep.Failures[0].Detail, "no signed note") {
		t.Fatalf("strict verify after a checkpoint without its note: ok %v, %v", rep.OK, rep.Failures)
	}
}
