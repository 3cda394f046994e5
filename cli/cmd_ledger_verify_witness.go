package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"

	tdnote "github.com/transparency-dev/formats/note"
	"github.com/urfave/cli/v2"
	"golang.org/x/mod/sumdb/note"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/tlog"
)

// kindNotWitnessed extends the failure kinds: verify --witness KEY found
// no checkpoint of the ledger cosigned by KEY.
const kindNotWitnessed ledger.Kind = "not-witnessed"

// witnessFlags are verify's flags for checking the ledger against a
// witness's cosignature.
func witnessFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "witness", Usage: "require a checkpoint cosigned by the witness `KEY` (as `opx collector key` prints it, or a file holding it) and prove the ledger an append-only extension of it"},
		&cli.StringFlag{Name: "cosigned", Usage: "with --witness: the cosigned checkpoint note in `FILE` (default: the latest one the ledger recorded as ledger.cosigned that KEY cosigned)", TakesFile: true},
	}
}

// witnessCheck is --witness: the witness's key and the cosigned note
// found (nil until found).
type witnessCheck struct {
	key   note.Verifier
	vkey  string
	file  string // --cosigned, or where the note was found
	note  []byte
	seq   uint64 // the ledger.cosigned entry it came from (file == "")
	found bool
}

// witnessResult is what --witness proved, for --json.
type witnessResult struct {
	Witness  string       `json:"witness"`
	KeyHash  string       `json:"key_hash"`
	From     string       `json:"from"` // the file, or "ledger.cosigned seq N"
	TreeSize uint64       `json:"tree_size,omitempty"`
	Extends  *sinceResult `json:"extends,omitempty"`
	OK       bool         `json:"ok"`
}

// newWitnessCheck reads --witness and --cosigned (nil without --witness).
func newWitnessCheck(c *cli.Context, nargs int) (*witnessCheck, error) {
	k := c.String("witness")
	if k == "" {
		if c.String("cosigned") != "" {
			return nil, usagef(c, "--cosigned goes with --witness KEY")
		}
		return nil, nil
	}
	if nargs > 0 {
		return nil, usagef(c, "--witness checks the ledger, not an export: give --ledger (or nothing) instead of EXPORT")
	}
	if c.String("since") != "" {
		return nil, usagef(c, "give either --since FILE or --witness KEY, not both")
	}
	k, err := readKeyArg(k)
	if err != nil {
		return nil, usagef(c, "--witness: %v", err)
	}
	v, err := tdnote.NewVerifierForCosignatureV1(k)
	if err != nil {
		return nil, usagef(c, "--witness %q: %v (want <name>+<hash>+<key>, as `opx collector key` prints)", clip(k, 120), err)
	}
	w := &witnessCheck{key: v, vkey: k}
	if f := c.String("cosigned"); f != "" {
		if w.note, err = tlog.ReadNote(f); err != nil {
			return nil, err
		}
		w.file, w.found = f, true
	}
	return w, nil
}

// readKeyArg is a key given inline or as a file holding it.
func readKeyArg(k string) (string, error) {
	k = strings.TrimSpace(k)
	if strings.Count(k, "+") >= 2 {
		return k, nil
	}
	b, err := tlog.ReadNote(k) // bounded, regular files only
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// cosignedBy reports whether note carries a valid cosignature of v.
func cosignedBy(text []byte, v note.Verifier) bool {
	_, err := note.Open(text, note.VerifierList(v))
	return err == nil
}

// find looks for the latest ledger.cosigned entry whose note KEY
// cosigned, unless --cosigned gave one. Memory: one note at a time
// (event.MaxCosignedNote).
func (w *witnessCheck) find(rv *ledgerReview) error {
	if w.found {
		return nil
	}
	take := func(seq uint64, raw []byte) (bool, error) {
		e, err := ledger.ParseEntry(raw)
		if err != nil || e.Type != event.TypeCosigned {
			return false, nil // verify reports what does not parse
		}
		p, err := event.Decode(e)
		if err != nil {
			return false, nil
		}
		cs := p.(*event.Cosigned)
		if !cosignedBy([]byte(cs.Note), w.key) {
			return false, nil
		}
		w.note, w.seq, w.found = []byte(cs.Note), seq, true
		return true, nil
	}
	if rv.local != nil {
		return rv.local.Backward(func(seq uint64, raw []byte) (bool, error) {
			done, err := take(seq, raw)
			return !done, err
		})
	}
	h, err := rv.remote.Head()
	if err != nil {
		return err
	}
	return rv.remote.Entries(0, h.Seq, func(seq uint64, raw []byte) error {
		_, err := take(seq, raw)
		return err
	})
}

// sinceSize is the tree size whose root the verify pass keeps.
func (w *witnessCheck) sinceSize() uint64 {
	if !w.found {
		return 0
	}
	return peekSize(w.note)
}

// check requires the cosigned checkpoint and the ledger to extend it;
// failures (not-witnessed, not-extension) go into rep.
func (w *witnessCheck) check(c *cli.Context, rv *ledgerReview, rep *ledger.Report, walk *treeWalk) (*witnessResult, error) {
	res := &witnessResult{Witness: w.key.Name(), KeyHash: fmt.Sprintf("%08x", w.key.KeyHash())}
	head := rep.HeadSeq
	if !w.found {
		res.From = "the ledger's ledger.cosigned entries"
		rep.AddFailure(&ledger.IntegrityError{Seq: head, Kind: kindNotWitnessed,
			Detail: fmt.Sprintf("the ledger records no checkpoint cosigned by %s (no ledger.cosigned entry whose cosignature verifies under the key)", w.key.Name())})
		return res, nil
	}
	from := w.file
	if from == "" {
		from = fmt.Sprintf("ledger.cosigned seq %d", w.seq)
	}
	res.From = from
	if !cosignedBy(w.note, w.key) {
		rep.AddFailure(&ledger.IntegrityError{Seq: head, Kind: kindNotWitnessed,
			Detail: fmt.Sprintf("%s carries no valid cosignature of %s", from, w.key.Name())})
		return res, nil
	}
	res.TreeSize = peekSize(w.note)
	since, err := checkExtends(c, rv, rep, walk, "--witness", from, w.note)
	if err != nil {
		if !errors.Is(err, tlog.ErrUnsigned) && !errors.Is(err, tlog.ErrMalformed) {
			return nil, err // reading the ledger failed
		}
		// The ledger's own signature on what the witness cosigned does
		// not verify: not a checkpoint of this ledger as it stands.
		rep.AddFailure(&ledger.IntegrityError{Seq: head, Kind: ledger.KindNotExtension,
			Detail: fmt.Sprintf("%s: %v", from, err)})
		return res, nil
	}
	res.Extends = since
	res.OK = since.Extended
	return res, nil
}

// printWitness says what --witness proved.
func printWitness(w io.Writer, r *witnessResult) {
	if r.OK {
		fmt.Fprintf(w, "%s: the ledger extends the checkpoint of %s cosigned by %s (%s), from %s\n",
			green(w, "witness"), plural(r.TreeSize, "entry", "entries"), r.Witness, r.KeyHash, r.From)
		return
	}
	fmt.Fprintf(w, "%s: no checkpoint cosigned by %s (%s) that the ledger extends (%s)\n", red(w, "witness"), r.Witness, r.KeyHash, r.From)
}
