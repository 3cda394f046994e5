package cli

import (
	"fmt"

	"github.com/opx-dev/opx/cli/internal/ledgerloc"
	"github.com/opx-dev/opx/cli/internal/ui"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/urfave/cli/v2"
)

func ledgerKeyCommand() *cli.Command {
	return &cli.Command{
		Name:  "key",
		Usage: "print the verifier key of the ledger's signed checkpoints",
		Description: "Prints the key that verifies the ledger's checkpoints, as the ledger records it last (ledger.key),\n" +
			"in the C2SP signed-note format <name>+<hash>+<key>; the name is the ledger's origin,\n" +
			"opx.local/ledger/<ledger id>. Keep a copy where this machine cannot change it: with it,\n" +
			"opx ledger verify-proof and verify --since --key check proofs and checkpoints without\n" +
			"trusting this machine (whoever owns it can sign with its key, so a key learnt from it later\n" +
			"proves less). Any signed-note verifier (golang.org/x/mod/sumdb/note) accepts it.\n\n" +
			exitCodesHelp("integrity failure found: the recorded key does not parse"),
		HideHelpCommand: true,
		Flags:           append(ledgerloc.Flags(), ui.JSONFlag()),
		Action:          runLedgerKey,
	}
}

// keyResult is the --json output of key.
type keyResult struct {
	VKey   string `json:"vkey"`
	Origin string `json:"origin"`
	Seq    uint64 `json:"seq"` // the ledger.key entry
	Reason string `json:"reason"`
}

func runLedgerKey(c *cli.Context) error {
	if _, err := wantArgs(c, 0, 0, ""); err != nil {
		return err
	}
	rv, err := openReviewOrEngine(c)
	if err != nil {
		return err
	}
	defer rv.Close()
	var k event.RecordedKey
	var ok bool
	if rv.local != nil {
		var h ledger.Head
		if h, err = rv.local.Head(); err == nil {
			k, ok, err = event.KeyAt(rv.local, h.Seq+1)
		}
	} else {
		// Read through the engine; each ledger.key entry is parsed and
		// checked here (opx ledger verify checks the chain under it).
		var w *treeWalk
		if w, err = walkTree(rv.remote, 0); err == nil && len(w.keys) > 0 {
			k, ok = w.keys[len(w.keys)-1], true
		}
	}
	if err != nil {
		return err
	}
	if !ok {
		return errNoKey
	}
	if c.Bool("json") {
		return ui.WriteJSON(c, keyResult{VKey: k.Key.VKey, Origin: k.Verifier.Name(), Seq: k.Seq, Reason: k.Key.Reason})
	}
	_, err = fmt.Fprintln(c.App.Writer, k.Key.VKey)
	return err
}
