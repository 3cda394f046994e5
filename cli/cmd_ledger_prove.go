package cli

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/opx-dev/opx/cli/internal/ledgerloc"
	"github.com/opx-dev/opx/cli/internal/ui"
	"github.com/opx-dev/opx/cli/internal/usage"
	"github.com/opx-dev/opx/internal/regularfile"
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
			"comes from the engine and is checked here the same way, with the key in the state directory;\n" +
			"when its latest checkpoint does not cover SEQ yet, the engine signs one that does (at most one\n" +
			"a second). With -o FILE the proof (as --json prints it) is written to FILE only once it is\n" +
			"built and checked: through a temporary file renamed into place, so a failed prove leaves\n" +
			"nothing, and a proof already in FILE stays whole until the new one replaces it.\n\n" +
			exitCodesHelp("the checkpoint does not verify (signature, another key, not this ledger's tree) or the proof does not"),
		HideHelpCommand: true,
		Flags: append(ledgerloc.Flags(),
			&cli.StringFlag{Name: "checkpoint", Usage: "prove against the checkpoint note in `FILE` instead of the latest", TakesFile: true},
			keyFlag("verifier `KEY` (or a file holding it) for --checkpoint FILE (default: the keys the ledger records)"),
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the proof (JSON) to `FILE`, only once it is built and checked", TakesFile: true},
			ui.JSONFlag(),
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
		return usage.Errorf(c, "SEQ %q is not a non-negative integer", args[0])
	}
	if c.String("key") != "" && c.String("checkpoint") == "" {
		return usage.Errorf(c, "--key goes with --checkpoint FILE (the latest checkpoint is checked with the key the ledger records)")
	}
	out := c.String("output")
	if out == "" {
		out = c.String("o") // given after SEQ: positionals sets the alias
	}
	if out != "" {
		if err := checkProofOutput(out); err != nil {
			return err // before asking anything of the ledger or the engine
		}
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
	if out != "" || c.Bool("json") {
		b, err := p.Marshal()
		switch {
		case err != nil:
			return err
		case out == "":
			_, err = c.App.Writer.Write(b)
			return err
		}
		if err := regularfile.WriteAtomic(out, b, 0); err != nil || c.Bool("json") {
			return err // with --json, the proof in FILE is all the output
		}
	}
	e, err := ledger.ParseEntry([]byte(p.Entry))
	if err != nil {
		return err
	}
	w := c.App.Writer
	leaf := tlog.LeafHash([]byte(p.Entry))
	fmt.Fprintf(w, "%s: entry %d (%s) is leaf %d of the tree of %s of %s\n", ui.Green(w, "proved"), seq, e.Type, seq,
		ui.Plural(sc.CP.Size, "entry", "entries"), sc.CP.Origin)
	fmt.Fprintf(w, "  leaf hash   %x  (SHA-256 of 0x00 and the entry's %d stored bytes)\n", leaf, len(p.Entry))
	fmt.Fprintf(w, "  root hash   %s  (%s)\n", sc.CP.RootString(), ui.Plural(uint64(len(p.Hashes)), "proof hash", "proof hashes"))
	where := "the latest checkpoint"
	if sc.Seq != 0 {
		where = fmt.Sprintf("the checkpoint of entry %d", sc.Seq)
	} else if c.String("checkpoint") != "" {
		where = "the checkpoint in " + c.String("checkpoint")
	}
	fmt.Fprintf(w, "  signed by   %s  (%s)\n", sc.Key, where)
	if out != "" {
		fmt.Fprintf(w, "Wrote the proof to %s; check it anywhere: opx ledger verify-proof %s --key KEY\n", out, out)
		return nil
	}
	fmt.Fprintf(w, "Save it with -o FILE and check it anywhere: opx ledger verify-proof FILE --key KEY\n")
	return nil
}

// checkProofOutput refuses an -o target WriteAtomic would not replace,
// saying how to print the proof instead.
func checkProofOutput(path string) error {
	err := regularfile.CheckReplaceable(path)
	if errors.Is(err, regularfile.ErrNotRegular) {
		return fmt.Errorf("%w (-o writes a proof file; use --json to print it)", err)
	}
	return err
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
	} else if sc, err = latestSigned(l); err == nil && seq >= sc.CP.Size {
		err = notCoveredOffline(l, seq, sc)
	}
	if err != nil {
		return nil, sc, err
	}
	p, err := buildProof(l, seq, sc)
	return p, sc, err
}

// notCoveredOffline says why entry seq cannot be proved offline against
// the latest signed checkpoint sc, which does not cover it, and what to
// do: only the engine signs, and it signs one that covers the entry when
// prove asks it.
func notCoveredOffline(l *ledger.Ledger, seq uint64, sc signedCheckpoint) error {
	h, err := l.Head()
	if err != nil {
		return err
	}
	if seq > h.Seq {
		return fmt.Errorf("entry %d is not in the ledger: its last entry is %d", seq, h.Seq)
	}
	return fmt.Errorf("entry %d is not in the latest signed checkpoint (entry %d, a tree of %s: entries 0..%d), and only the engine signs: "+
		"start it (opx start) and prove again, it then signs one that covers entry %d; or prove an entry up to %d",
		seq, sc.Seq, ui.Plural(sc.CP.Size, "entry", "entries"), sc.CP.Size-1, seq, sc.CP.Size-1)
}

// buildProof builds and checks the inclusion proof of entry seq against
// the checked checkpoint sc.
func buildProof(l *ledger.Ledger, seq uint64, sc signedCheckpoint) (*tlog.Proof, error) {
	if seq >= sc.CP.Size {
		return nil, fmt.Errorf("entry %d is not in the checkpoint's tree of %s (entries 0..%d); a later checkpoint covers it",
			seq, ui.Plural(sc.CP.Size, "entry", "entries"), sc.CP.Size-1)
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
