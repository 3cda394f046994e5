package chronicle_test

import (
	"bytes"
	"testing"

	"github.com/opx-dev/opx/chronicle"
	"github.com/opx-dev/opx/ledger/event"
)

// FuzzDecodeTree: no manifest bytes make DecodeTree panic, and a manifest
// it accepts re-encodes to the very same bytes (a manifest is canonical:
// one state per line, sorted, each line as the encoder writes it), which
// is what lets its hash stand for the tree.
func FuzzDecodeTree(f *testing.F) {
	good := (&chronicle.Tree{Items: []event.FileState{
		file("a", "x", 0o644),
		{Path: "d", State: event.StateDir, Mode: 0o755},
		{Path: "d/l", State: event.StateSymlink, Target: "../a"},
	}}).Encode()
	f.Add(good)
	f.Add([]byte{})
	f.Add([]byte("{\"path\":\"a\",\"state\":\"absent\"}\n"))
	f.Add(bytes.Repeat([]byte("\n"), 100))
	f.Fuzz(func(t *testing.T, manifest []byte) {
		tree, err := chronicle.DecodeTree(manifest)
		if err != nil {
			return
		}
		if again := tree.Encode(); !bytes.Equal(again, manifest) {
			t.Fatalf("accepted a manifest that is not canonical (%d -> %d bytes)", len(manifest), len(again))
		}
	})
}
