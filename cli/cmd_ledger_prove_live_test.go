package cli_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/opx-dev/opx/cli"
	"github.com/opx-dev/opx/engine/checkpoint"
	"github.com/opx-dev/opx/ledger/tlog"
)

// TestLedgerLive_Checkpoints: while an engine holds the ledger, key,
// checkpoint, prove (LedgerService.Prove) and verify --since
// (LedgerService.ConsistencyProof) answer through it, and everything the
// engine sends is checked here against the signed note and the key read
// from the state directory.
func TestLedgerLive_Checkpoints(t *testing.T) {
	s := signedLedger(t, 20, 10)
	saved := saveNote(t, s.Notes[12])
	serveLedgerWith(t, s.Path, checkpoint.NewKeeper(s.Dir))

	r := run(t, "ledger", "key", "--ledger", s.Path)
	r.wantCode(t, cli.ExitOK)
	if r.stdout != s.Key.String()+"\n" {
		t.Errorf("key through the engine: %q, want %q", r.stdout, s.Key)
	}
	r = run(t, "ledger", "checkpoint", "--ledger", s.Path)
	r.wantCode(t, cli.ExitOK)
	note := r.stdout
	cp, err := tlog.Open([]byte(note), s.Key)
	if err != nil || cp.Size <= 23 {
		t.Fatalf("checkpoint through the engine: %+v %v (the engine signs one at start)", cp, err)
	}
	if b, err := os.ReadFile(filepath.Join(s.Dir, tlog.NoteFile)); err != nil || string(b) != note {
		t.Errorf("the note file %q (%v), the engine's latest %q", b, err, note)
	}
	r = run(t, "ledger", "prove", "5", "--json", "--ledger", s.Path)
	r.wantCode(t, cli.ExitOK)
	p, err := tlog.ParseProof([]byte(r.stdout))
	if err != nil || p.TreeSize != cp.Size || p.Checkpoint != note {
		t.Fatalf("prove through the engine: %+v %v", p, err)
	}
	v := run(t, "ledger", "verify-proof", writeFile(t, "proof.json", []byte(r.stdout)), "--key", s.Key.String())
	v.wantCode(t, cli.ExitOK)
	r = run(t, "ledger", "prove", "5", "--ledger", s.Path)
	r.wantCode(t, cli.ExitOK)
	r.wantOut(t, "proved: entry 5", fmt.Sprintf("(the checkpoint of entry %d)", cp.Size)) // as offline
	r = run(t, "ledger", "prove", "3", "--checkpoint", saved, "--json", "--ledger", s.Path)
	r.wantCode(t, cli.ExitOK)
	if p, err := tlog.ParseProof([]byte(r.stdout)); err != nil || p.TreeSize != 12 {
		t.Fatalf("prove --checkpoint through the engine: %+v %v", p, err)
	}
	other := signedLedger(t, 20, 10)
	r = run(t, "ledger", "prove", "3", "--checkpoint", saveNote(t, other.Notes[12]), "--ledger", s.Path)
	r.wantCode(t, cli.ExitIntegrity)
	r = run(t, "ledger", "verify", "--since", saved, "--ledger", s.Path)
	r.wantCode(t, cli.ExitOK)
	r.wantOut(t, "is an append-only extension of "+saved)
	r = run(t, "ledger", "verify", "--since", saveNote(t, other.Notes[12]), "--key", other.Key.String(), "--ledger", s.Path)
	r.wantCode(t, cli.ExitIntegrity)
	r.wantOut(t, "not-extension")
}
