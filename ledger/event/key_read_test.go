package event_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/tlog"
)

// TestKeyAt: the key recorded last before a seq, found through the keys
// projection (a ledger written with it) and by reading backward (one
// written without it), agree at every seq.
func TestKeyAt(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	with := filepath.Join(dir, "with.db")
	without := filepath.Join(dir, "without.db")
	var recorded []uint64 // seq of each ledger.key
	for _, path := range []string{with, without} {
		var opts ledger.Options
		if path == with {
			opts.Projections = []ledger.Projection{event.KeysProjection{}}
		}
		l, err := ledger.Create(path, opts)
		if err != nil {
			t.Fatal(err)
		}
		recorded = recorded[:0]
		for i := 0; i < 30; i++ {
			var p event.Payload = &event.Note{Author: "t", Text: "x"}
			if i == 3 || i == 17 || i == 18 {
				skey, _, err := tlog.GenerateKey(tlog.Origin(l.ID()))
				if err != nil {
					t.Fatal(err)
				}
				s, _ := tlog.NewSigner(skey)
				p = &event.Key{VKey: s.Verifier().String(), Reason: event.KeyReplaced}
			}
			app, err := l.Append(ctx, ledger.Sync, event.MustRecord("", p))
			if err != nil {
				t.Fatal(err)
			}
			if p.Type() == event.TypeKey {
				recorded = append(recorded, app[0].Seq)
			}
		}
		l.Close()
	}
	lw, err := ledger.OpenReadOnly(with)
	if err != nil {
		t.Fatal(err)
	}
	defer lw.Close()
	lo, err := ledger.OpenReadOnly(without)
	if err != nil {
		t.Fatal(err)
	}
	defer lo.Close()
	for before := uint64(0); before <= 32; before++ {
		want, wantOK := uint64(0), false
		for _, s := range recorded {
			if s < before {
				want, wantOK = s, true
			}
		}
		for name, l := range map[string]*ledger.Ledger{"projection": lw, "backward": lo} {
			k, ok, err := event.KeyAt(l, before)
			if err != nil || ok != wantOK || (ok && k.Seq != want) {
				t.Errorf("%s: KeyAt(%d) = %d %v %v, want %d %v", name, before, k.Seq, ok, err, want, wantOK)
			}
		}
	}
	ks, err := event.Keys(lw)
	if err != nil || len(ks) != 3 {
		t.Fatalf("Keys: %v %v", ks, err)
	}
}
