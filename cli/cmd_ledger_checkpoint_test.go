package cli_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/opx-dev/opx/cli"
	"github.com/opx-dev/opx/engine/checkpoint"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/tlog"
)

// TestLedgerCheckpoint: the latest signed checkpoint, byte for byte as
// the ledger and the note file hold it.
func TestLedgerCheckpoint(t *testing.T) {
	s := signedLedger(t, 20, 5, 12)
	r := run(t, "ledger", "checkpoint", "--ledger", s.Path)
	r.wantCode(t, cli.ExitOK)
	latest := s.Notes[15] // genesis, the key, 12 notes and the checkpoint after the 5th
	if latest == "" || r.stdout != latest {
		t.Fatalf("stdout %q, want the latest note %q (notes %v)", r.stdout, latest, s.Notes)
	}
	if b, err := os.ReadFile(filepath.Join(s.Dir, tlog.NoteFile)); err != nil || string(b) != r.stdout {
		t.Errorf("the note file %q (%v) is not the latest note", b, err)
	}
	cp, err := tlog.Open([]byte(r.stdout), s.Key)
	if err != nil || cp.Size != 15 {
		t.Fatalf("the note: %+v %v", cp, err)
	}
	r = run(t, "ledger", "checkpoint", "--json", "--ledger", s.Path)
	r.wantCode(t, cli.ExitOK)
	m := r.jsonObject(t)
	if m["note"] != latest || m["tree_size"] != jsonNumber("15") || m["seq"] != jsonNumber("15") || m["vkey"] != s.Key.String() {
		t.Errorf("--json: %v", m)
	}
}

func TestLedgerCheckpoint_NoneYet(t *testing.T) {
	s := signedLedger(t, 3)
	r := run(t, "ledger", "checkpoint", "--ledger", s.Path)
	r.wantCode(t, cli.ExitError)
	r.wantErr(t, "no signed checkpoint yet")
}

// TestLedgerCheckpoint_OtherKey: a checkpoint signed by a key other than
// the one the ledger records before it does not verify (exit 4), and
// strict verify says so at its seq.
func TestLedgerCheckpoint_OtherKey(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "ledger.db")
	other := checkpoint.NewKeeper(t.TempDir())
	k := checkpoint.NewKeeper(dir)
	l, err := ledger.Create(path, ledger.Options{NoSync: true, SignCheckpoint: other.Sign})
	if err != nil {
		t.Fatal(err)
	}
	if err := k.Setup(ctx, l); err == nil {
		err = other.Setup(ctx, l) // records its key too...
	}
	if err != nil {
		t.Fatal(err)
	}
	// ... then the recorded key is put back to k's, as a forger who
	// signs with a key of their own would have to.
	vk, _ := k.Verifier()
	if _, err := l.Append(ctx, ledger.Sync, event.MustRecord("", &event.Key{VKey: vk.String(), Reason: event.KeyReplaced})); err != nil {
		t.Fatal(err)
	}
	app, err := l.Checkpoint(ctx, ledger.Sync)
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	r := run(t, "ledger", "checkpoint", "--ledger", path)
	r.wantCode(t, cli.ExitIntegrity)
	r.wantErr(t, "not signed by the key")
	r = run(t, "ledger", "verify", "--strict", "--json", "--ledger", path)
	r.wantCode(t, cli.ExitIntegrity)
	offline := r.stdout
	m := r.jsonObject(t)
	fs, _ := m["failures"].([]any)
	if len(fs) != 1 || fs[0].(map[string]any)["seq"] != jsonNumber(utoa(app.Seq)) || fs[0].(map[string]any)["kind"] != "checkpoint" {
		t.Errorf("strict verify: %v", m)
	}
	// The same through an engine that holds the ledger (and signs its own
	// checkpoint at start with the key beside it, as opx start's does).
	serveLedgerWith(t, path, checkpoint.NewKeeper(dir))
	r = run(t, "ledger", "verify", "--strict", "--json", "--ledger", path)
	r.wantCode(t, cli.ExitIntegrity)
	m = r.jsonObject(t)
	fs, _ = m["failures"].([]any)
	if len(fs) != 1 || fs[0].(map[string]any)["seq"] != jsonNumber(utoa(app.Seq)) || fs[0].(map[string]any)["kind"] != "checkpoint" {
		t.Errorf("strict verify through the engine: %v\noffline: %s", m, offline)
	}
	// The latest checkpoint is now the engine's own, signed by the key it
	// found recorded last.
	r = run(t, "ledger", "checkpoint", "--ledger", path)
	r.wantCode(t, cli.ExitOK)
	if _, err := tlog.Open([]byte(r.stdout), vk); err != nil {
		t.Errorf("the engine's checkpoint: %v", err)
	}
}
