package tlog_test

import (
	"bytes"
	"errors"
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

// FuzzParseAddCheckpointRequest: any bytes parse to a request or fail
// with ErrMalformed, never panic; a parsed request is within the bounds
// and marshals back to the bytes it came from (one spelling per request).
//
//	go test ./ledger/tlog -run '^$' -fuzz FuzzParseAddCheckpointRequest -fuzztime 60s
func FuzzParseAddCheckpointRequest(f *testing.F) {
	f.Add([]byte(specExample))
	f.Add([]byte("old 0\n\nx"))
	f.Add([]byte("old 1\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n\nx\n"))
	f.Add([]byte("old 01\r\n\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := tlog.ParseAddCheckpointRequest(b)
		if err != nil {
			if !errors.Is(err, tlog.ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			return
		}
		if len(r.Proof) > tlog.MaxProofLines || len(r.Checkpoint) == 0 || len(r.Checkpoint) > tlog.MaxNoteBytes {
			t.Fatalf("out of bounds: %d proof lines, checkpoint of %d bytes", len(r.Proof), len(r.Checkpoint))
		}
		if got := r.Marshal(); !bytes.Equal(got, b) {
			t.Fatalf("Marshal(Parse(%q)) = %q", b, got)
		}
	})
}

// FuzzParseSize: any bytes parse to a size or fail with ErrMalformed; a
// parsed size formats back to the body with its final newline.
func FuzzParseSize(f *testing.F) {
	f.Add([]byte("0\n"))
	f.Add([]byte("18446744073709551615\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := tlog.ParseSize(b)
		if err != nil {
			if !errors.Is(err, tlog.ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			return
		}
		if got := tlog.FormatSize(n); !bytes.Equal(bytes.TrimSuffix(got, []byte{'\n'}), bytes.TrimSuffix(b, []byte{'\n'})) {
			t.Fatalf("FormatSize(ParseSize(%q)) = %q", b, got)
		}
	})
}
