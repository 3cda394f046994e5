package cli

import (
	"bytes"
	"fmt"
	"io"

	"github.com/opx-dev/opx/cli/internal/ui"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/tlog"
	"github.com/transparency-dev/formats/log"
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
// checkpoint that does not verify (signature, key) is an error. Through
// the engine, the entries and the proof come from it and are checked
// here alike.
//
// w, when not nil, is the walk folded in the verify pass (through an
// engine); else the file is read once more here.
func checkSince(c *cli.Context, rv *ledgerReview, rep *ledger.Report, w *treeWalk) (*sinceResult, error) {
	file := c.String("since")
	note, err := tlog.ReadNote(file)
	if err != nil {
		return nil, err
	}
	return checkExtends(c, rv, rep, w, "--since", file, note)
}

// checkExtends is checkSince's proof for the checkpoint note, named file
// in the output (a file, or where the ledger recorded it).
func checkExtends(c *cli.Context, rv *ledgerReview, rep *ledger.Report, w *treeWalk, flag, file string, note []byte) (*sinceResult, error) {
	var err error
	var given *tlog.Verifier
	if c.String("key") != "" {
		v, err := verifierFlag(c)
		if err != nil {
			return nil, err
		}
		given = &v
	}
	src := sinceSourceOf(rv)
	h, err := src.Head()
	if err != nil {
		return nil, err
	}
	// One pass: the verifier's own tree (every entry's stored bytes,
	// hashed here), its root at the size the note claims (checked once
	// the signature is), and the keys the ledger records.
	if w == nil || !w.want[peekSize(note)] {
		if w, err = walkTree(src, peekSize(note)); err != nil {
			return nil, fmt.Errorf("%s: recompute the tree: %w", flag, err)
		}
	} else if err := w.done(); err != nil {
		return nil, fmt.Errorf("%s: recompute the tree: %w", flag, err)
	}
	sc, err := openNote(file, note, given, w.keys)
	if err != nil {
		return nil, err
	}
	size2, root2 := w.tree.Size(), w.tree.Root()
	rootAt, walked := w.rootAt(sc.CP.Size)
	res := &sinceResult{File: file, TreeSize: sc.CP.Size, RootHash: sc.CP.RootString(), VKey: sc.Key.String(),
		Size: size2, Root: tlog.Checkpoint{Root: root2}.RootString()}
	fail := func(seq uint64, format string, args ...any) (*sinceResult, error) {
		rep.AddFailure(&ledger.IntegrityError{Seq: seq, Kind: ledger.KindNotExtension, Detail: fmt.Sprintf(format, args...)})
		return res, nil
	}
	origin, _ := tlog.KeyOrigin(h.LedgerID, sc.Key.Name())
	switch {
	case sc.CP.Origin != origin:
		return fail(0, "%s is a checkpoint of %s; this ledger is %s", file, sc.CP.Origin, origin)
	case sc.CP.Size > size2:
		return fail(size2, "%s covers %s; the ledger holds %s: entries were removed (truncated)",
			file, ui.Plural(sc.CP.Size, "entry", "entries"), ui.Plural(size2, "entry", "entries"))
	}
	proof, err := src.ConsistencyProof(sc.CP.Size, size2)
	if err != nil {
		return fail(sc.CP.Size-1, "no consistency proof from the checkpoint's %d entries to the ledger's %d: %v", sc.CP.Size, size2, err)
	}
	if err := tlog.VerifyConsistency(sc.CP.Size, size2, proof, sc.CP.Root, root2); err != nil {
		return fail(sc.CP.Size-1, "the ledger's first %s are not those %s signed (the entries hash to root %s, the checkpoint says %s): rewritten or forked since: %v",
			ui.Plural(sc.CP.Size, "entry", "entries"), file, tlog.Checkpoint{Root: rootAt}.RootString(), sc.CP.RootString(), err)
	}
	if !walked || rootAt != sc.CP.Root {
		// A consistency proof that checks out against both roots makes
		// this impossible; said plainly should it ever happen.
		return fail(sc.CP.Size-1, "the ledger's first %d entries hash to root %s, the checkpoint says %s",
			sc.CP.Size, tlog.Checkpoint{Root: rootAt}.RootString(), sc.CP.RootString())
	}
	res.Extended = true
	return res, nil
}

// peekSize is the tree size a note's body claims, read before its
// signature is checked only to know which root to keep on the way (0 when
// it does not parse: the signature check then says why).
func peekSize(note []byte) uint64 {
	body, _, _ := bytes.Cut(note, []byte("\n\n"))
	var cp log.Checkpoint
	if _, err := cp.Unmarshal(append(body, '\n')); err != nil {
		return 0
	}
	return cp.Size
}

// printSince says what --since proved.
func printSince(w io.Writer, s *sinceResult) {
	if s.Extended {
		fmt.Fprintf(w, "%s: the ledger (tree of %s, root %s recomputed from the entries) is an append-only extension of %s (tree of %s, root %s, signed by %s): consistency proof checked\n",
			ui.Green(w, "since"), ui.Plural(s.Size, "entry", "entries"), s.Root, s.File, ui.Plural(s.TreeSize, "entry", "entries"), s.RootHash, s.VKey)
		return
	}
	fmt.Fprintf(w, "%s: the ledger is NOT an append-only extension of %s (tree of %s, root %s, signed by %s)\n",
		ui.Red(w, "since"), s.File, ui.Plural(s.TreeSize, "entry", "entries"), s.RootHash, s.VKey)
}
