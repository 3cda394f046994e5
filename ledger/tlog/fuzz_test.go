package tlog_test

import (
	"testing"

	"github.com/opx-dev/opx/ledger/tlog"
)

// FuzzParseProof: any bytes parse to a proof or a clear error, and a
// parsed proof verifies or fails, never panics.
//
//	go test ./ledger/tlog -run '^$' -fuzz FuzzParseProof -fuzztime 60s
func FuzzParseProof(f *testing.F) {
	tt := newTestTree(f, 9)
	for _, c := range [][2]uint64{{0, 1}, {3, 9}, {8, 9}} {
		b, err := tt.proof(f, c[0], c[1]).Marshal()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"index":0,"tree_size":1,"root_hash":"","hashes":[],"entry":"","checkpoint":""}`))
	v := tt.signer.Verifier()
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := tlog.ParseProof(b)
		if err != nil {
			return
		}
		_, _ = p.Verify(v)
	})
}

// FuzzOpen: any bytes open as a checkpoint signed by the key or fail
// with an error, never panic.
func FuzzOpen(f *testing.F) {
	s := newSigner(f, tlog.Origin(testID))
	good, err := s.Sign(9, [32]byte{1})
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte(good))
	f.Add([]byte("opx.local/ledger/x\n1\nAAAA\n\n— x abc\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = tlog.Open(b, s.Verifier())
	})
}
