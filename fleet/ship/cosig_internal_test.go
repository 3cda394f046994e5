package ship

import (
	"bytes"
	"context"
	"crypto/rand"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
	tdnote "github.com/transparency-dev/formats/note"
	"golang.org/x/mod/sumdb/note"

	"github.com/opx-dev/opx/fleet"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/tlog"
)

type countingRecorder struct {
	l *ledger.Ledger
	n int
}

func (r *countingRecorder) RecordCosigned(ctx context.Context, c *event.Cosigned) error {
	rec, err := event.Record("", c)
	if err != nil {
		return err
	}
	r.n++
	_, err = r.l.Append(ctx, ledger.Sync, rec)
	return err
}

func signedLedger(t *testing.T, tb ...testing.TB) (*ledger.Ledger, *tlog.Signer) {
	var h testing.TB = t
	if len(tb) > 0 {
		h = tb[0]
	}
	path := filepath.Join(h.TempDir(), "ledger.db")
	l, err := ledger.Create(path, ledger.Options{})
	if err != nil {
		h.Fatal(err)
	}
	id := l.ID()
	l.Close()
	skey, _, _ := tlog.GenerateKey(tlog.Origin(id))
	signer, _ := tlog.NewSigner(skey)
	l, err = ledger.Open(path, ledger.Options{SignCheckpoint: func(th ledger.TreeHead) (string, error) { return signer.Sign(th.Size, th.Root) }})
	if err != nil {
		h.Fatal(err)
	}
	h.Cleanup(func() { l.Close() })
	for range 4 {
		l.Append(context.Background(), ledger.Sync, event.MustRecord("", &event.Note{Author: "a", Text: "b"}))
	}
	return l, signer
}

func witness(t *testing.T, name string) (note.Signer, string) {
	skey, vkey, _ := note.GenerateKey(rand.Reader, name)
	s, err := tdnote.NewSignerForCosignatureV1(skey)
	if err != nil {
		t.Fatal(err)
	}
	cv, _ := tdnote.VKeyToCosignatureV1(vkey)
	return s, cv
}

func addSig(t *testing.T, text string, known note.Verifier, s note.Signer) string {
	n, err := note.Open([]byte(text), note.VerifierList(known))
	if err != nil {
		t.Fatal(err)
	}
	out, err := note.Sign(n, s)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// Every cosignature message that is not a cosignature of the ledger's own
// tree, by its own key, is refused and records nothing.
func TestTakeCosig_Hostile(t *testing.T) {
	l, signer := signedLedger(t)
	vkey := signer.Verifier().String()
	own, _ := note.NewVerifier(vkey)
	th, _ := l.TreeHead()
	good, _ := signer.Sign(th.Size, th.Root)
	w, wkey := witness(t, "witness.test")
	cosigned := addSig(t, good, own, w)

	// The same ledger id, another key (a checkpoint signed by someone else).
	otherSkey, _, _ := tlog.GenerateKey(tlog.Origin(l.ID()))
	other, _ := tlog.NewSigner(otherSkey)
	foreign, _ := other.Sign(th.Size, th.Root)
	otherV, _ := note.NewVerifier(other.Verifier().String())
	foreignCosigned := addSig(t, foreign, otherV, w)
	// Our key, another root (a tree this ledger does not have).
	var bad [32]byte
	bad[0] = 1
	wrongRoot, _ := signer.Sign(th.Size, bad)
	wrongRootCosigned := addSig(t, wrongRoot, own, w)
	// Our key, a size past the ledger.
	past, _ := signer.Sign(th.Size+100, th.Root)
	pastCosigned := addSig(t, past, own, w)
	// A cosignature by another witness than the configured one.
	w2, _ := witness(t, "witness.test")
	otherWitness := addSig(t, good, own, w2)

	msg := func(subjectID string, size uint64, text string) *nats.Msg {
		return fleet.CosigMessage(prefix, subjectID, size, []byte(text))
	}
	noWire := msg(l.ID(), th.Size, cosigned)
	noWire.Header.Del(fleet.HdrWire)
	for _, tc := range []struct {
		name    string
		m       *nats.Msg
		witness string
		want    string
	}{
		{"oversized", msg(l.ID(), th.Size, cosigned+strings.Repeat("x", fleet.MaxCosigBytes)), "", "malformed"},
		{"no wire", noWire, "", "wire"},
		{"another ledger", msg(strings.Repeat("a", 32), th.Size, cosigned), "", "a cosignature for ledger"},
		{"junk", msg(l.ID(), th.Size, "\x00\xff junk\n\n"), "", "checkpoint"},
		{"uncosigned", msg(l.ID(), th.Size, good), "", "no cosignature"},
		{"size mismatch", msg(l.ID(), th.Size-1, cosigned), "", "says size"},
		{"another key", msg(l.ID(), th.Size, foreignCosigned), "", "checkpoint"},
		{"another root", msg(l.ID(), th.Size, wrongRootCosigned), "", "not this ledger's tree"},
		{"past the ledger", msg(l.ID(), th.Size+100, pastCosigned), "", "size"},
		{"another witness", msg(l.ID(), th.Size, otherWitness), wkey, "configured witness"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &countingRecorder{l: l}
			s := &Shipper{cfg: Config{Prefix: prefix, VerifierKey: vkey, WitnessKey: tc.witness}, l: l, rec: r, id: l.ID(),
				cosigC: "fleet.c"}
			err := s.takeCosig(context.Background(), tc.m)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("takeCosig: %v, want an error saying %q", err, tc.want)
			}
			if r.n != 0 || s.cosigned != 0 {
				t.Fatalf("recorded %d", r.n)
			}
		})
	}
	// The good one, under the configured witness key, is recorded once.
	r := &countingRecorder{l: l}
	s := &Shipper{cfg: Config{Prefix: prefix, VerifierKey: vkey, WitnessKey: wkey}, l: l, rec: r, id: l.ID(), cosigC: "fleet.c"}
	for range 2 {
		if err := s.takeCosig(context.Background(), msg(l.ID(), th.Size, cosigned)); err != nil {
			t.Fatal(err)
		}
	}
	if r.n != 1 || s.cosigned != th.Size {
		t.Fatalf("recorded %d, cosigned %d", r.n, s.cosigned)
	}
}

const prefix = "t"

// offerCosig keeps one message waiting however many arrive.
func TestOfferCosig_Bounded(t *testing.T) {
	s := &Shipper{cosigs: make(chan *nats.Msg, 1)}
	for i := range 1000 {
		s.offerCosig(&nats.Msg{Data: []byte{byte(i)}})
	}
	if len(s.cosigs) != 1 || !bytes.Equal((<-s.cosigs).Data, []byte{byte(999 % 256)}) {
		t.Fatal("not the latest")
	}
}

// FuzzTakeCosig: whatever a cosignature message holds, takeCosig neither
// panics nor records anything that is not a cosignature of the ledger's
// own tree.
func FuzzTakeCosig(f *testing.F) {
	f.Add([]byte("opx.local/ledger/x\n1\nAAAA\n\n— x sig\n"), "1")
	f.Add([]byte{}, "0")
	f.Add([]byte("\n\n\n"), "18446744073709551615")
	l, signer := signedLedger(nil, f)
	vkey := signer.Verifier().String()
	th, _ := l.TreeHead()
	good, _ := signer.Sign(th.Size, th.Root)
	f.Add([]byte(good), "5")
	f.Fuzz(func(t *testing.T, data []byte, size string) {
		m := fleet.CosigMessage(prefix, l.ID(), 1, data)
		m.Header.Set(fleet.HdrSize, size)
		r := &countingRecorder{l: l}
		s := &Shipper{cfg: Config{Prefix: prefix, VerifierKey: vkey}, l: l, rec: r, id: l.ID(), cosigC: "fleet.fuzz"}
		err := s.takeCosig(context.Background(), m)
		if err == nil && r.n > 0 {
			// Recorded: it must be the ledger's tree, cosigned.
			if _, cerr := tlog.Open(data, signer.Verifier()); cerr != nil {
				t.Fatalf("recorded a note that does not verify: %v", cerr)
			}
		}
	})
}
