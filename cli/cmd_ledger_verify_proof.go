package cli

import (
	"errors"
	"fmt"

	"github.com/opx-dev/opx/cli/internal/ui"
	"github.com/opx-dev/opx/cli/internal/usage"
	"github.com/opx-dev/opx/ledger/tlog"
	"github.com/urfave/cli/v2"
)

func ledgerVerifyProofCommand() *cli.Command {
	return &cli.Command{
		Name:      "verify-proof",
		Usage:     "check an inclusion proof (opx ledger prove --json) offline, without the ledger",
		ArgsUsage: "PROOF.json",
		Description: "Checks, with nothing but the file and the verifier key: the checkpoint in the proof is signed by\n" +
			"KEY and names the proof's tree_size and root_hash; the entry's bytes hash to the leaf\n" +
			"SHA-256(0x00 || entry) (RFC 6962); the hashes lead from that leaf at index to the root; and\n" +
			"the entry says it is entry index. KEY is a verifier key (<name>+<hash>+<key>, as opx ledger key\n" +
			"prints it) or a file holding one: take it from a copy you trust, not from the proof's source.\n\n" +
			exitCodesHelp("the proof does not verify (bad signature, another key, a changed hash, entry or size, a malformed proof)"),
		HideHelpCommand: true,
		Flags: []cli.Flag{
			keyFlag("verifier `KEY` (or a file holding it) the checkpoint must be signed by (required)"),
			ui.JSONFlag(),
		},
		Action: runLedgerVerifyProof,
	}
}

// verifyProofResult is the --json output of verify-proof.
type verifyProofResult struct {
	OK       bool   `json:"ok"`
	Index    uint64 `json:"index"`
	TreeSize uint64 `json:"tree_size"`
	RootHash string `json:"root_hash"`
	Origin   string `json:"origin"`
	Error    string `json:"error,omitempty"`
}

func runLedgerVerifyProof(c *cli.Context) error {
	args, err := wantArgs(c, 1, 1, "PROOF.json")
	if err != nil {
		return err
	}
	if c.String("key") == "" {
		return usage.Errorf(c, "--key KEY is required: the verifier key the checkpoint must be signed by (opx ledger key prints it)")
	}
	v, err := verifierFlag(c)
	if err != nil {
		return err
	}
	p, err := tlog.ReadProof(args[0])
	var cp tlog.Checkpoint
	if err == nil {
		cp, err = p.Verify(v)
	}
	if err != nil && !errors.Is(err, tlog.ErrMalformed) && !errors.Is(err, tlog.ErrUnsigned) && !errors.Is(err, tlog.ErrProof) {
		return err // not read: an operational error
	}
	res := verifyProofResult{OK: err == nil, Origin: v.Name()}
	if p != nil {
		res.Index, res.TreeSize, res.RootHash = p.Index, p.TreeSize, p.RootHash
	}
	if err != nil {
		res.Error = err.Error()
	}
	switch {
	case c.Bool("json"):
		if werr := ui.WriteJSON(c, res); werr != nil {
			return werr
		}
	case err == nil:
		fmt.Fprintf(c.App.Writer, "%s: entry %d is in the tree of %s of %s (root %s), signed by %s\n",
			ui.Green(c.App.Writer, "ok"), p.Index, ui.Plural(cp.Size, "entry", "entries"), cp.Origin, cp.RootString(), v)
	}
	if err != nil {
		return fmt.Errorf("verify-proof %s: %w", args[0], err)
	}
	return nil
}
