package cli

import (
	"fmt"
	"strconv"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/tlog"
	"github.com/urfave/cli/v2"
)

func ledgerProveCommand() *cli.Command {
	return &cli.Command{
		Name:      "prove",
		Usage:     "prove that entry SEQ is in the ledger's signed tree (RFC 6962 inclusion proof)",
		ArgsUsage: "SEQ",
		Description: "Builds an inclusion proof of entry SEQ against the latest signed checkpoint (or the one in\n" +
			"--checkpoint FILE, saved earlier with opx ledger checkpoint): the hashes that lead from the\n" +
			"entry's leaf, SHA-256(0x00 || stored bytes), to the checkpoint's root. With --json it prints\n" +
			"the proof as one object, {index, tree_size, root_hash, hashes, entry, checkpoint}, that\n" +
			"anyone checks without the ledger: opx ledger verify-proof PROOF.json --key KEY, or any RFC 6962\n" +
			"verifier. Before printing, prove checks the checkpoint (signed by the ledger's key, or --key;\n" +
			"the tree the ledger holds) and the proof itself. While an engine holds the ledger, the proof\n" +
			"comes from the engine and is checked here the same way, with the key in the state directory.\n\n" +
			exitCodesHelp("the checkpoint does not verify (signature, another key, not this ledger's tree) or the proof does not"),
		HideHelpCommand: true,
		Flags: append(locationFlags(),
			&cli.StringFlag{Name: "checkpoint", Usage: "prove against the checkpoint note in `FILE` instead of the latest", TakesFile: true},
			keyFlag("verifier `KEY` (or a file holding it) for --checkpoint FILE (default: the keys the ledger records)"),
			jsonFlag(),
		),
		Action: runLedgerProve,
	}
}

func runLedgerProve(c *cli.Context) error {
	args, err := wantArgs(c, 1, 1, "SEQ")
	if err != nil {
		return err
	}
	seq, err := strconv.ParseUint(args[0], 10, 64)
	if err != nil {
		return usagef(c, "SEQ %q is not a non-negative integer", args[0])
	}
	if c.String("key") != "" && c.String("checkpoint") == "" {
		return usagef(c, "--key goes with --checkpoint FILE (the latest checkpoint is checked with the key the ledger records)")
	}
	rv, err := openReviewOrEngine(c)
	if err != nil {
		return err
	}
	defer rv.Close()
	var p *tlog.Proof
	var sc signedCheckpoint
	if rv.local != nil {
		p, sc, err = prove(c, rv.local, seq)
	} else {
		p, sc, err = proveThroughEngine(c, rv, seq)
	}
	if err != nil {
		return err
	}
	if c.Bool("json") {
		b, err := p.Marshal()
		if err != nil {
			return err
		}
		_, err = c.App.Writer.Write(b)
		return err
	}
	e, err := ledger.ParseEntry([]byte(p.Entry))
	if err != nil {
		return err
	}
	w := c.App.Writer
	leaf := tlog.LeafHash([]byte(p.Entry))
	fmt.Fprintf(w, "%s: entry %d (%s) is leaf %d of the tree of %s of %s\n", green(w, "proved"), seq, e.Type, seq,
		plural(sc.CP.Size, "entry", "entries"), sc.CP.Origin)
	fmt.Fprintf(w, "  leaf hash   %x  (SHA-256 of 0x00 and the entry's %d stored bytes)\n", leaf, len(p.Entry))
	fmt.Fprintf(w, "  root hash   %s  (%s)\n", sc.CP.RootString(), plural(uint64(len(p.Hashes)), "proof hash", "proof hashes"))
	where := "the latest checkpoint"
	if sc.Seq != 0 {
		where = fmt.Sprintf("the checkpoint of entry %d", sc.Seq)
	} else if c.String("checkpoint") != "" {
		where = "the checkpoint in " + c.String("checkpoint")
	}
	fmt.Fprintf(w, "  signed by   %s  (%s)\n", sc.Key, where)
	fmt.Fprintf(w, "Save it with --json and check it anywhere: opx ledger verify-proof PROOF.json --key KEY\n")
	return nil
}

// prove builds and checks the inclusion proof of entry seq against the
// latest signed checkpoint or --checkpoint FILE.
func prove(c *cli.Context, l *ledger.Ledger, seq uint64) (*tlog.Proof, signedCheckpoint, error) {
	var sc signedCheckpoint
	var err error
	if f := c.String("checkpoint"); f != "" {
		if sc, err = openNoteFile(c, l, f); err == nil {
			err = matchTree(l, sc.CP)
			if err != nil {
				err = fmt.Errorf("%s: %w", f, err)
			}
		}
	} else {
		sc, err = latestSigned(l)
	}
	if err != nil {
		return nil, sc, err
	}
	p, err := buildProof(l, seq, sc)
	return p, sc, err
}

// buildProof builds and checks the inclusion proof of entry seq against
// the checked checkpoint sc.
func buildProof(l *ledger.Ledger, seq uint64, sc signedCheckpoint) (*tlog.Proof, error) {
	if seq >= sc.CP.Size {
		return nil, fmt.Errorf("entry %d is not in the checkpoint's tree of %s (entries 0..%d); a later checkpoint covers it",
			seq, plural(sc.CP.Size, "entry", "entries"), sc.CP.Size-1)
	}
	e, err := l.Get(seq)
	if err != nil {
		return nil, err
	}
	hashes, err := l.InclusionProof(seq, sc.CP.Size)
	if err != nil {
		return nil, err
	}
	p := tlog.NewProof(seq, e.Raw, sc.CP, sc.Note, hashes)
	// What a third party will check, checked here first: a stored tile
	// that does not match the entries would give a proof that fails.
	if _, err := p.Verify(sc.Key); err != nil {
		return nil, fmt.Errorf("the ledger's proof of entry %d: %w", seq, err)
	}
	return p, nil
}

// proveThroughEngine is prove while an engine holds the ledger: the proof
// comes from the engine (LedgerService.Prove) and is checked here.
func proveThroughEngine(c *cli.Context, rv *ledgerReview, seq uint64) (*tlog.Proof, signedCheckpoint, error) {
	var given *tlog.Verifier
	if c.String("key") != "" {
		v, err := verifierFlag(c)
		if err != nil {
			return nil, signedCheckpoint{}, err
		}
		given = &v
	}
	var note []byte
	if f := c.String("checkpoint"); f != "" {
		var err error
		if note, err = tlog.ReadNote(f); err != nil {
			return nil, signedCheckpoint{}, err
		}
	}
	return remoteProve(rv.remote, rv.path, seq, note, given)
}
