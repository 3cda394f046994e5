package event_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/tlog"
)

// TestCheckCheckpoints: a recorded note must be signed by the key
// recorded last before it and name the tree the entries make; once a key
// is recorded, a checkpoint without a note is a finding (stripped).
func TestCheckCheckpoints(t *testing.T) {
	const id = "0123456789abcdef0123456789abcdef"
	signer := func() *tlog.Signer {
		skey, _, err := tlog.GenerateKey(tlog.Origin(id))
		if err != nil {
			t.Fatal(err)
		}
		s, err := tlog.NewSigner(skey)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a, b := signer(), signer()
	keys := []event.RecordedKey{{Seq: 1, Verifier: a.Verifier()}, {Seq: 10, Verifier: b.Verifier()}}
	check := event.CheckCheckpoints(id, keys)
	th := ledger.TreeHead{Size: 5, Root: [32]byte{5}}
	byA, _ := a.Sign(th.Size, th.Root)
	byB, _ := b.Sign(th.Size, th.Root)
	other, _ := a.Sign(th.Size, [32]byte{6})
	tests := []struct {
		name string
		seq  uint64
		note string
		want string // "" for no error
	}{
		{"before any key, no note", 0, "", ""},
		{"signed by the key before it", 5, byA, ""},
		{"signed by the later key", 11, byB, ""},
		{"signed by the earlier key after the change", 11, byA, "not signed by the key"},
		{"signed before any key was recorded", 0, byA, "no ledger.key is recorded before it"},
		{"another tree", 5, other, "names tree 5"},
		{"note stripped", 5, "", "stripped"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := check(tt.seq, th, tt.note)
			if (tt.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.want)) {
				t.Fatalf("check = %v, want %q", err, tt.want)
			}
			if strings.Contains(tt.want, "not signed") && !errors.Is(err, tlog.ErrUnsigned) {
				t.Errorf("%v is not ErrUnsigned", err)
			}
		})
	}
}
