package ship

// Review of issue 17 (REVIEW17.md): evidence tests.

import (
	"context"
	"testing"

	tdnote "github.com/transparency-dev/formats/note"
	"golang.org/x/mod/sumdb/note"

	"github.com/opx-dev/opx/fleet"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// RV17 finding 7: without fleet.witness (optional; docs/fleet.md: "else
// any signature other than the ledger's own") the engine records the first
// "cosignature" that reaches its subject for a size, whoever made it, and
// then ignores every cosignature of that size or less. Anyone who may
// publish on <prefix>.cosig.<id> (or reads the ledger stream, where every
// checkpoint note is) front-runs the witness with a signature of a key of
// their own under the witness's name: the real cosignature is never
// recorded, and `opx ledger verify --witness REALKEY` finds none.
func TestRV17_UnverifiedCosignatureShadowsTheWitness(t *testing.T) {
	l, signer := signedLedger(t)
	vkey := signer.Verifier().String()
	own, _ := note.NewVerifier(vkey)
	th, _ := l.TreeHead()
	cp, _ := signer.Sign(th.Size, th.Root)
	real, realKey := witness(t, "witness.example")
	fake, _ := witness(t, "witness.example") // a key of the attacker's, the same name
	r := &countingRecorder{l: l}
	s := &Shipper{cfg: Config{Prefix: prefix, VerifierKey: vkey}, l: l, rec: r, id: l.ID(), cosigC: "fleet.c"}
	ctx := context.Background()
	if err := s.takeCosig(ctx, fleet.CosigMessage(prefix, l.ID(), th.Size, []byte(addSig(t, cp, own, fake)))); err != nil {
		t.Fatal(err)
	}
	if err := s.takeCosig(ctx, fleet.CosigMessage(prefix, l.ID(), th.Size, []byte(addSig(t, cp, own, real)))); err != nil {
		t.Logf("the witness's own cosignature: %v", err)
	}
	wv, err := tdnote.NewVerifierForCosignatureV1(realKey)
	if err != nil {
		t.Fatal(err)
	}
	h, _ := l.Head()
	found := false
	l.Range(0, h.Seq, func(e ledger.Entry) error {
		if e.Type == event.TypeCosigned {
			p, _ := event.Decode(e)
			if _, err := note.Open([]byte(p.(*event.Cosigned).Note), note.VerifierList(wv)); err == nil {
				found = true
			}
		}
		return nil
	})
	if !found {
		t.Errorf("the witness cosigned tree size %d and the engine received it, but recorded only the forged one (%d recorded): verify --witness with the witness's key fails not-witnessed", th.Size, r.n)
	}
}
