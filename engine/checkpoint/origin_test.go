package checkpoint_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opx-dev/opx/engine/checkpoint"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/ledgertest"
	"github.com/opx-dev/opx/ledger/tlog"
)

// openAs opens the ledger in dir with a keeper signing for origin ("" the
// default), as the engine does with ledger.origin.
func openAs(t *testing.T, dir, origin string) (*ledger.Ledger, *checkpoint.Keeper, error) {
	t.Helper()
	k := checkpoint.NewKeeper(dir)
	k.SetOrigin(origin)
	path := filepath.Join(dir, "ledger.db")
	opts := ledger.Options{NoSync: true, SignCheckpoint: k.Sign}
	l, err := ledger.Open(path, opts)
	if errors.Is(err, ledger.ErrNotExist) {
		l, err = ledger.Create(path, opts)
	}
	if err != nil {
		t.Fatal(err)
	}
	return l, k, k.Setup(context.Background(), l)
}

func signedOrigin(t *testing.T, l *ledger.Ledger) string {
	t.Helper()
	if _, err := l.Append(context.Background(), ledger.Sync, event.MustRecord("", &event.Note{Author: "t", Text: "x"})); err != nil {
		t.Fatal(err)
	}
	app, err := l.Checkpoint(context.Background(), ledger.Sync)
	if err != nil {
		t.Fatal(err)
	}
	e, err := l.Get(app.Seq)
	if err != nil {
		t.Fatal(err)
	}
	note, _ := ledger.FieldString(e.Data, "note")
	line, _, _ := strings.Cut(note, "\n")
	return line
}

// TestKeeper_Origin: a ledger started under the default origin, then
// with ledger.origin set, then changed again: each change retires the
// key, records the new one (ledger.key replaced, naming the origin), and
// signs every later checkpoint for the new origin; the ledger verifies
// strictly throughout (each checkpoint against the key recorded before
// it, its origin the key's name), and the origin verifiers read is the
// recorded one.
func TestKeeper_Origin(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ledger.db")
	check := func(want string) {
		t.Helper()
		l, err := ledger.OpenReadOnly(path)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		ks := keys(t, l)
		if got := event.LatestOrigin(l.ID(), ks); got != want {
			t.Fatalf("the recorded origin is %s, want %s", got, want)
		}
		opts, err := event.StrictOptionsFor(l)
		if err != nil {
			t.Fatal(err)
		}
		if rep, err := l.Verify(opts); err != nil || !rep.OK {
			t.Fatalf("verify: %v %v", err, rep.Err())
		}
	}
	l, _, err := openAs(t, dir, "")
	if err != nil {
		t.Fatal(err)
	}
	id := l.ID()
	if o := signedOrigin(t, l); o != tlog.Origin(id) {
		t.Fatalf("default origin %s", o)
	}
	l.Close()
	check(tlog.Origin(id))
	for _, origin := range []string{"example.com/opx/team-a", "git.acme.internal/opx/a"} {
		l, k, err := openAs(t, dir, origin)
		if err != nil {
			t.Fatal(err)
		}
		if k.Origin() != origin {
			t.Fatalf("keeper signs for %s", k.Origin())
		}
		ks := keys(t, l)
		last := ks[len(ks)-1]
		if last.Verifier.Name() != origin || last.Key.Reason != event.KeyReplaced || !strings.Contains(last.Key.Detail, "ledger.origin") {
			t.Fatalf("recorded %+v", last.Key)
		}
		if o := signedOrigin(t, l); o != origin {
			t.Fatalf("signed for %s, want %s", o, origin)
		}
		l.Close()
		check(origin)
		// Started again with the same origin: nothing new recorded.
		l, _, err = openAs(t, dir, origin)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(keys(t, l)); n != len(ks) {
			t.Fatalf("%d keys recorded after a restart, want %d", n, len(ks))
		}
		l.Close()
	}
	retired, _ := filepath.Glob(filepath.Join(dir, tlog.KeyFile+".retired-*"))
	if len(retired) != 2 {
		t.Fatalf("retired keys %v, want 2", retired)
	}
	ledgertest.MustVerify(t, path, event.StrictOptions())
}

// TestKeeper_Origin_ForeignKey: a key file for another origin that this
// ledger never recorded is refused, as before: never retired or used.
func TestKeeper_Origin_ForeignKey(t *testing.T) {
	dir := t.TempDir()
	if _, err := tlog.CreateKey(dir, "example.com/other"); err != nil {
		t.Fatal(err)
	}
	l, _, err := openAs(t, dir, "example.com/mine")
	defer l.Close()
	if err == nil || !strings.Contains(err.Error(), "signs for example.com/other") {
		t.Fatalf("a foreign key file: %v", err)
	}
}
