package cli

import (
	"fmt"
	"io"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/tlog"
	"github.com/urfave/cli/v2"
)

// sinceFlags are verify's flags for checking the ledger against a
// checkpoint saved earlier.
func sinceFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "since", Usage: "also prove the ledger is an append-only extension of the checkpoint note in `FILE` (saved earlier with opx ledger checkpoint)", TakesFile: true},
		keyFlag("verifier `KEY` (or a file holding it) the --since checkpoint, or an EXPORT's bundled checkpoint, must be signed by (default: the keys the ledger records; for an EXPORT the key bundled with it, which proves only that the export agrees with itself)"),
	}
}

// sinceResult says what --since proved, for the output.
type sinceResult struct {
	File     string `json:"file"`
	TreeSize uint64 `json:"tree_size"`
	RootHash string `json:"root_hash"`
	VKey     string `json:"vkey"`
	Extended bool   `json:"extended"` // an append-only extension of it
	Size     uint64 `json:"ledger_tree_size"`
	Root     string `json:"ledger_root_hash"` // recomputed from the entries
}

// checkSince proves, with an RFC 6962 consistency proof from the ledger's
// stored tree checked against the checkpoint's signed root and the root
// recomputed here from the entries (never a stored one), that the ledger
// is an append-only extension of the checkpoint in --since FILE. A ledger
// that is not (rewritten, truncated, forked, another ledger) gets a
// not-extension failure in rep, however consistent its chain is. A
// checkpoint that does not verify (signature, key) is an error.
func checkSince(c *cli.Context, l *ledger.Ledger, rep *ledger.Report) (*sinceResult, error) {
	file := c.String("since")
	sc, err := openNoteFile(c, l, file)
	if err != nil {
		return nil, err
	}
	res := &sinceResult{File: file, TreeSize: sc.CP.Size, RootHash: sc.CP.RootString(), VKey: sc.Key.String()}
	// The verifier's own tree: every entry's stored bytes, hashed here.
	b := tlog.NewRootBuilder()
	var root1 [32]byte
	h, err := l.Head()
	if err != nil {
		return nil, err
	}
	if sc.CP.Size == 0 {
		root1 = b.Root()
	}
	err = l.RangeRaw(0, h.Seq, func(seq uint64, raw []byte) error {
		if seq != b.Size() {
			return fmt.Errorf("entry %d after %d entries: %w", seq, b.Size(), ledger.ErrIntegrity)
		}
		b.Append(raw)
		if b.Size() == sc.CP.Size {
			root1 = b.Root()
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("--since: recompute the tree: %w", err)
	}
	res.Size, res.Root = b.Size(), tlog.Checkpoint{Root: b.Root()}.RootString()
	fail := func(seq uint64, format string, args ...any) (*sinceResult, error) {
		rep.AddFailure(&ledger.IntegrityError{Seq: seq, Kind: ledger.KindNotExtension, Detail: fmt.Sprintf(format, args...)})
		return res, nil
	}
	switch {
	case sc.CP.Origin != tlog.Origin(l.ID()):
		return fail(0, "%s is a checkpoint of %s; this ledger is %s", file, sc.CP.Origin, tlog.Origin(l.ID()))
	case sc.CP.Size > b.Size():
		return fail(b.Size(), "%s covers %s; the ledger holds %s: entries were removed (truncated)",
			file, plural(sc.CP.Size, "entry", "entries"), plural(b.Size(), "entry", "entries"))
	}
	proof, err := l.ConsistencyProof(sc.CP.Size, b.Size())
	if err != nil {
		return fail(sc.CP.Size-1, "no consistency proof from the checkpoint's %d entries to the ledger's %d: %v", sc.CP.Size, b.Size(), err)
	}
	if err := tlog.VerifyConsistency(sc.CP.Size, b.Size(), proof, sc.CP.Root, b.Root()); err != nil {
		return fail(sc.CP.Size-1, "the ledger's first %s are not those %s signed (the entries hash to root %s, the checkpoint says %s): rewritten or forked since: %v",
			plural(sc.CP.Size, "entry", "entries"), file, tlog.Checkpoint{Root: root1}.RootString(), sc.CP.RootString(), err)
	}
	if root1 != sc.CP.Root {
		// A consistency proof that checks out against both roots makes
		// this impossible; said plainly should it ever happen.
		return fail(sc.CP.Size-1, "the ledger's first %d entries hash to root %s, the checkpoint says %s",
			sc.CP.Size, tlog.Checkpoint{Root: root1}.RootString(), sc.CP.RootString())
	}
	res.Extended = true
	return res, nil
}

// printSince says what --since proved.
func printSince(w io.Writer, s *sinceResult) {
	if s.Extended {
		fmt.Fprintf(w, "%s: the ledger (tree of %s, root %s recomputed from the entries) is an append-only extension of %s (tree of %s, root %s, signed by %s): consistency proof checked\n",
			green(w, "since"), plural(s.Size, "entry", "entries"), s.Root, s.File, plural(s.TreeSize, "entry", "entries"), s.RootHash, s.VKey)
		return
	}
	fmt.Fprintf(w, "%s: the ledger is NOT an append-only extension of %s (tree of %s, root %s, signed by %s)\n",
		red(w, "since"), s.File, plural(s.TreeSize, "entry", "entries"), s.RootHash, s.VKey)
}
