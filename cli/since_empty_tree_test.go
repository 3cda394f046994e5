package cli_test

import (
	"crypto/sha256"
	"strings"
	"testing"

	"github.com/opx-dev/opx/cli"
	"github.com/opx-dev/opx/ledger/tlog"
)

// TestLedgerVerifySince_EmptyTree: a checkpoint of tree size 0, signed by
// the ledger's own key, is refused as malformed (exit 4), whatever root
// it names: opx never signs the empty tree, every ledger extends it, and
// a finding about it would have no entry to name (not seq 2^64-1). prove
// --checkpoint refuses it alike.
func TestLedgerVerifySince_EmptyTree(t *testing.T) {
	s := signedLedger(t, 5, 5)
	k, err := tlog.LoadKey(s.Dir)
	if err != nil {
		t.Fatal(err)
	}
	for name, root := range map[string][32]byte{
		"the empty tree's root": sha256.Sum256(nil), // RFC 6962: the hash of the empty string
		"another root":          sha256.Sum256([]byte("another root")),
	} {
		t.Run(name, func(t *testing.T) {
			note, err := k.Sign(0, root)
			if err != nil {
				t.Fatal(err)
			}
			saved := saveNote(t, note)
			for _, args := range [][]string{
				{"ledger", "verify", "--since", saved, "--ledger", s.Path},
				{"ledger", "verify", "--since", saved, "--key", s.Key.String(), "--ledger", s.Path},
				{"ledger", "prove", "1", "--checkpoint", saved, "--ledger", s.Path},
			} {
				r := run(t, args...)
				r.wantCode(t, cli.ExitIntegrity)
				r.wantErr(t, "malformed", "tree size 0")
				if strings.Contains(r.stdout+r.stderr, "18446744073709551615") {
					t.Errorf("%v: says 2^64-1:\n%s\n%s", args, r.stdout, r.stderr)
				}
			}
		})
	}
}
