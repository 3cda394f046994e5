package checkpoint_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opx-dev/opx/engine/checkpoint"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/ledgertest"
	"github.com/opx-dev/opx/ledger/tlog"
)

// open opens (or creates) the ledger in dir with a keeper's signing, as
// the engine does, and sets the keeper up.
func open(t *testing.T, dir string) (*ledger.Ledger, *checkpoint.Keeper, error) {
	t.Helper()
	k := checkpoint.NewKeeper(dir)
	path := filepath.Join(dir, "ledger.db")
	opts := ledger.Options{NoSync: true, SignCheckpoint: k.Sign}
	l, err := ledger.Open(path, opts)
	if errors.Is(err, ledger.ErrNotExist) {
		l, err = ledger.Create(path, opts)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l, k, k.Setup(context.Background(), l)
}

func keys(t *testing.T, l *ledger.Ledger) []event.RecordedKey {
	t.Helper()
	ks, err := event.Keys(l)
	if err != nil {
		t.Fatal(err)
	}
	return ks
}

// TestKeeper_Setup: the key is created 0600 beside the ledger and
// recorded once; a lost key is replaced and recorded as such.
func TestKeeper_Setup(t *testing.T) {
	dir := t.TempDir()
	l, k, err := open(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, tlog.KeyFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file %v %v", fi, err)
	}
	v, _ := k.Verifier()
	ks := keys(t, l)
	if len(ks) != 1 || ks[0].Key.VKey != v.String() || ks[0].Key.Reason != event.KeyCreated || v.Name() != tlog.Origin(l.ID()) {
		t.Fatalf("recorded %+v, key %s", ks, v)
	}
	// Set up again (an engine restart): nothing more is recorded.
	if err := k.Setup(context.Background(), l); err != nil {
		t.Fatal(err)
	}
	if len(keys(t, l)) != 1 {
		t.Fatal("the same key was recorded twice")
	}
	// A checkpoint is signed by it and published once durable.
	app, err := l.Checkpoint(context.Background(), ledger.Async)
	if err != nil {
		t.Fatal(err)
	}
	if err := k.Publish(context.Background(), l, app.Seq); err != nil {
		t.Fatal(err)
	}
	b, err := tlog.ReadNote(filepath.Join(dir, tlog.NoteFile))
	if err != nil {
		t.Fatal(err)
	}
	cp, err := tlog.Open(b, v)
	if err != nil || cp.Size != app.Seq {
		t.Fatalf("published note %+v %v (checkpoint %d)", cp, err, app.Seq)
	}
	// The key file is lost: a new key, recorded as replacing the old.
	l.Close()
	if err := os.Remove(filepath.Join(dir, tlog.KeyFile)); err != nil {
		t.Fatal(err)
	}
	l, k, err = open(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	v2, _ := k.Verifier()
	ks = keys(t, l)
	if len(ks) != 2 || ks[1].Key.VKey != v2.String() || v2.String() == v.String() || ks[1].Key.Reason != event.KeyReplaced ||
		!strings.Contains(ks[1].Key.Detail, "was missing") || !strings.Contains(ks[1].Key.Detail, v.String()) {
		t.Fatalf("after losing the key: %+v", ks)
	}
	l.Close()
	ledgertest.MustVerify(t, filepath.Join(dir, "ledger.db"), event.StrictOptions())
}

// TestKeeper_Setup_Refusals: a key file that is not private, or that
// signs for another ledger, stops the engine with a clear error and is
// left as it is.
func TestKeeper_Setup_Refusals(t *testing.T) {
	t.Run("not private", func(t *testing.T) {
		dir := t.TempDir()
		l, _, err := open(t, dir)
		if err != nil {
			t.Fatal(err)
		}
		l.Close()
		key := filepath.Join(dir, tlog.KeyFile)
		if err := os.Chmod(key, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, err := open(t, dir); !errors.Is(err, tlog.ErrKeyInsecure) || !strings.Contains(err.Error(), "chmod 600") {
			t.Fatalf("Setup: %v", err)
		}
	})
	t.Run("another ledger's key", func(t *testing.T) {
		dir := t.TempDir()
		if _, err := tlog.CreateKey(dir, tlog.Origin("ffffffffffffffffffffffffffffffff")); err != nil {
			t.Fatal(err)
		}
		_, _, err := open(t, dir)
		if err == nil || !strings.Contains(err.Error(), "signs for opx.local/ledger/ffffffffffffffffffffffffffffffff, not for this ledger") {
			t.Fatalf("Setup: %v", err)
		}
	})
}

// TestKeeper_SignBeforeSetup: a checkpoint recorded before the key is set
// up (a tree built while the ledger opens) carries no note.
func TestKeeper_SignBeforeSetup(t *testing.T) {
	k := checkpoint.NewKeeper(t.TempDir())
	note, err := k.Sign(ledger.TreeHead{Size: 1})
	if note != "" || err != nil {
		t.Fatalf("Sign before Setup: %q %v", note, err)
	}
}

// TestKeeper_Publish_Older: publishing an older checkpoint after a newer
// one (the periodic checkpoint finishing after the one at stop) leaves
// the newer note in the note file; the same one again changes nothing.
func TestKeeper_Publish_Older(t *testing.T) {
	dir := t.TempDir()
	l, k, err := open(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var seqs []uint64
	for i := 0; i < 2; i++ {
		if _, err := l.Append(ctx, ledger.Async, event.MustRecord("", &event.Note{Author: "test", Text: "note"})); err != nil {
			t.Fatal(err)
		}
		app, err := l.Checkpoint(ctx, ledger.Async)
		if err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, app.Seq)
	}
	v, _ := k.Verifier()
	published := func() uint64 {
		t.Helper()
		b, err := tlog.ReadNote(filepath.Join(dir, tlog.NoteFile))
		if err != nil {
			t.Fatal(err)
		}
		cp, err := tlog.Open(b, v)
		if err != nil {
			t.Fatal(err)
		}
		return cp.Size
	}
	older, newer := seqs[0], seqs[1]
	for _, seq := range []uint64{newer, older, newer} {
		if err := k.Publish(ctx, l, seq); err != nil {
			t.Fatal(err)
		}
		if got := published(); got != newer {
			t.Fatalf("after publishing checkpoint %d: the note file holds tree %d, want %d (the newest published)", seq, got, newer)
		}
	}
	l.Close()
	ledgertest.MustVerify(t, filepath.Join(dir, "ledger.db"), event.StrictOptions())
}
