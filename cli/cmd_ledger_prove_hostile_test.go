package cli_test

import (
	"context"
	"strings"
	"testing"

	"github.com/opx-dev/opx/cli"
	"github.com/opx-dev/opx/engine/checkpoint"
	"github.com/opx-dev/opx/ledger"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
)

// lyingProver is a lyingEngine that also answers Prove and
// ConsistencyProof from the real ledger, then changes the answer as told.
type lyingProver struct {
	*lyingEngine
	prove       func(r *opxv1.ProveResponse)
	consistency func(r *opxv1.ConsistencyProofResponse)
}

func (f *lyingProver) Prove(_ context.Context, req *opxv1.ProveRequest) (*opxv1.ProveResponse, error) {
	l := f.l
	r := &opxv1.ProveResponse{TreeSize: req.TreeSize}
	if req.TreeSize == 0 {
		h, _ := l.Head()
		_, c, _, err := new(checkpoint.Latest).Find(l, h.Seq)
		if err != nil {
			return nil, err
		}
		r.TreeSize, r.Note = c.TreeSize, c.Note
	}
	e, err := l.Get(req.Seq)
	if err != nil {
		return nil, err
	}
	if r.Hashes, err = l.InclusionProof(req.Seq, r.TreeSize); err != nil {
		return nil, err
	}
	r.Entry = e.Raw
	if f.prove != nil {
		f.prove(r)
	}
	return r, nil
}

func (f *lyingProver) ConsistencyProof(_ context.Context, req *opxv1.ConsistencyProofRequest) (*opxv1.ConsistencyProofResponse, error) {
	hashes, err := f.l.ConsistencyProof(req.Size1, req.Size2)
	if err != nil {
		return nil, err
	}
	r := &opxv1.ConsistencyProofResponse{Hashes: hashes}
	if f.consistency != nil {
		f.consistency(r)
	}
	return r, nil
}

// TestLedgerProve_LyingEngine: a proof, a note or a consistency proof
// from the engine is checked here: an engine that changes the entry, a
// hash, the tree or the note, or sends a forged consistency proof, is
// caught (exit 4); an honest one passes.
func TestLedgerProve_LyingEngine(t *testing.T) {
	t.Setenv("OPX_LEDGER", "")
	other := signedLedger(t, 20, 10)
	cases := []struct {
		name  string
		prove func(r *opxv1.ProveResponse)
		args  []string
		code  int
		says  string
	}{
		{"honest", nil, nil, cli.ExitOK, "proved: entry 5"},
		{"entry changed", func(r *opxv1.ProveResponse) {
			r.Entry = []byte(strings.Replace(string(r.Entry), "note 4", "note 7", 1))
		}, nil, cli.ExitIntegrity, "is not in tree"},
		{"hash changed", func(r *opxv1.ProveResponse) { r.Hashes[1][0] ^= 1 }, nil, cli.ExitIntegrity, "does not verify"},
		{"hash dropped", func(r *opxv1.ProveResponse) { r.Hashes = r.Hashes[1:] }, nil, cli.ExitIntegrity, "does not verify"},
		{"another tree", func(r *opxv1.ProveResponse) { r.TreeSize-- }, nil, cli.ExitIntegrity, "the engine answered for tree"},
		{"another ledger's note", func(r *opxv1.ProveResponse) { r.Note = other.Notes[12] }, nil, cli.ExitIntegrity, "not signed by the key"},
		{"note rewritten", func(r *opxv1.ProveResponse) { r.Note = strings.Replace(r.Note, "\n12\n", "\n13\n", 1) }, nil, cli.ExitIntegrity, "not signed by the key"},
		{"too many hashes", func(r *opxv1.ProveResponse) { r.Hashes = make([][]byte, 65) }, nil, cli.ExitIntegrity, "65 hashes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := signedLedger(t, 20, 10)
			l, err := ledger.Open(s.Path, ledger.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			serveLying(t, s.Path, &lyingProver{lyingEngine: &lyingEngine{l: l}, prove: tc.prove})
			r := run(t, append([]string{"ledger", "prove", "5", "--ledger", s.Path}, tc.args...)...)
			r.wantCode(t, tc.code)
			if !strings.Contains(r.stdout+r.stderr, tc.says) {
				t.Errorf("prove through a lying engine: %v\n%s%s", r.err, r.stdout, r.stderr)
			}
		})
	}
	t.Run("forged consistency proof", func(t *testing.T) {
		s := signedLedger(t, 20, 10)
		saved := saveNote(t, s.Notes[12])
		s = growLedger(t, s, 5)
		l, err := ledger.Open(s.Path, ledger.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		serveLying(t, s.Path, &lyingProver{lyingEngine: &lyingEngine{l: l},
			consistency: func(r *opxv1.ConsistencyProofResponse) { r.Hashes[0][5] ^= 1 }})
		r := run(t, "ledger", "verify", "--since", saved, "--ledger", s.Path)
		r.wantCode(t, cli.ExitIntegrity)
		r.wantOut(t, "not-extension")
	})
}
