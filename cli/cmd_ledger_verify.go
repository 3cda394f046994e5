package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/opx-dev/opx/cli/internal/ledgerloc"
	"github.com/opx-dev/opx/cli/internal/ui"
	"github.com/opx-dev/opx/cli/internal/usage"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/tlog"
	"github.com/urfave/cli/v2"
)

// maxHumanFailures caps the failures listed in human output; --json
// lists up to ledger.MaxListedFailures, then counts the rest by kind.
const maxHumanFailures = 100

func ledgerVerifyCommand() *cli.Command {
	return &cli.Command{
		Name:      "verify",
		Usage:     "check the ledger (or an export) entry by entry: chain, head and blobs",
		ArgsUsage: "[EXPORT]",
		Description: "Without EXPORT, verifies the ledger file: keys contiguous from 0, each entry's seq and prev,\n" +
			"the stored head, and every blob an entry names. With EXPORT (a .jsonl or .jsonl.zst file),\n" +
			"verifies the export on its own, with the blobs and manifest in its bundle (NAME.blobs/).\n" +
			"Every failure is reported with its seq and kind, not just the first.\n" +
			"While an engine holds the ledger, verify reads it through the engine, up to the engine's durable head\n" +
			"when verify starts, and checks every entry and blob itself, exactly as offline: it takes nothing on the\n" +
			"engine's word but that head (which the entries must reach).\n\n" +
			"An export of a ledger that signs checkpoints carries its latest signed checkpoint, the verifier key\n" +
			"the ledger recorded and inclusion proofs of its first entry and of the last one the checkpoint\n" +
			"covers: verify checks the signature and the proofs (kinds checkpoint, tree-mismatch), so a session\n" +
			"segment proves its place in the full ledger. The bundled key proves only that the export agrees with\n" +
			"itself: pin the key from elsewhere with --key KEY (`opx ledger key` prints it); the output says which.\n\n" +
			"With --since FILE (a checkpoint saved earlier with opx ledger checkpoint), also proves that the\n" +
			"ledger is an append-only extension of it: the checkpoint's signature is checked (--key, else the\n" +
			"keys the ledger records), the tree is recomputed from the entries, and an RFC 6962 consistency\n" +
			"proof must lead from the checkpoint's root to it. A ledger rewritten, truncated or forked since\n" +
			"fails with kind not-extension, however consistent its hash chain is.\n\n" +
			"With --witness KEY (a fleet collector's witness key, as `opx collector key` prints it), requires a\n" +
			"checkpoint cosigned by KEY from off this machine: the largest one among every message on the\n" +
			"cosignature stream (the workspace's fleet.url, or --nats URL) and the note in --cosigned FILE (a\n" +
			"message published again cannot lower it); then proves the ledger extends\n" +
			"it as --since does. None: kind not-witnessed. A ledger rewritten or truncated on this machine after\n" +
			"the witness saw it fails with kind not-extension. --offline takes the ledger's own latest\n" +
			"ledger.cosigned entry instead, and says what that cannot detect (a truncation or rewrite before it).\n\n" +
			exitCodesHelp("integrity failure found: the ledger or export does not verify"),
		HideHelpCommand: true,
		Flags: append(append(ledgerloc.Flags(),
			&cli.BoolFlag{Name: "strict", Usage: "also check canonical form, each entry type's payload, and causal order (nothing ran without its verdict; every rollback has its plan first and its outcome after)"},
			ui.JSONFlag(),
		), append(sinceFlags(), witnessFlags()...)...),
		Action: runLedgerVerify,
	}
}

func runLedgerVerify(c *cli.Context) error {
	args, err := wantArgs(c, 0, 1, "")
	if err != nil {
		return err
	}
	bar := ui.NewProgress(c, "verify")
	opts := ledger.VerifyOptions{Progress: bar.Update}
	if c.Bool("strict") {
		opts = event.StrictOptions()
		opts.Progress = bar.Update
	}
	var rep *ledger.Report
	var m *ledger.Manifest
	var what string
	var since *sinceResult
	var tee *teeSource
	sinceSize := uint64(0) // the tree size the --since note claims: its root is kept on the way
	if f := c.String("since"); f != "" {
		if note, err := tlog.ReadNote(f); err == nil {
			sinceSize = peekSize(note)
		}
	}
	wits, err := newWitnessChecks(c, len(args))
	if err != nil {
		return err
	}
	var witnessed []*witnessResult
	if c.String("key") != "" && c.String("since") == "" && len(args) == 0 {
		return usage.Errorf(c, "--key goes with --since FILE, or with an EXPORT whose bundled checkpoint it checks")
	}
	if len(args) == 1 {
		if ledgerloc.Named(c) {
			return usage.Errorf(c, "give either --ledger or an EXPORT file, not both")
		}
		if c.String("since") != "" {
			return usage.Errorf(c, "--since checks the ledger, not an export: give --ledger (or nothing) instead of EXPORT")
		}
		what = args[0]
		if c.String("key") != "" {
			v, err := verifierFlag(c)
			if err != nil {
				return err
			}
			opts.CheckpointKey = v.String()
		}
		rep, m, err = ledger.VerifyExport(what, opts)
	} else {
		var rv *ledgerReview
		if rv, err = openReviewOrEngine(c); err != nil {
			return err
		}
		defer rv.Close()
		what = rv.path
		var witnessSizes []uint64 // the one pass keeps each witness's root
		for _, wit := range wits {
			if err := wit.find(rv); err != nil {
				return err
			}
			witnessSizes = append(witnessSizes, wit.sinceSize())
		}
		if rv.local != nil {
			if c.Bool("strict") {
				// Each signed checkpoint against the key recorded before it.
				if opts, err = event.StrictOptionsFor(rv.local); err != nil {
					return err
				}
				opts.Progress = bar.Update
			}
			rep, err = rv.local.Verify(opts)
		} else {
			// The engine is a pipe here: its entries and blob frames are
			// checked by the same code as the file's, up to its head, in
			// one pass that also folds what --since and the signed
			// checkpoints need (the tree, the keys recorded): a second
			// read could be answered with other bytes.
			tee = newTeeSource(rv.remote, sinceSize, false)
			tee.walk.wantRoots(witnessSizes...)
			if c.Bool("strict") {
				opts.CheckCheckpoint = tee.checkCheckpoint()
			}
			if opts.CheckEnd != nil {
				opts.CheckEnd = settleRunningPlans(rv.remote, rv.remote.FixedHead(), opts.CheckEnd)
			}
			rep, err = ledger.VerifySource(tee, opts)
		}
		if err == nil && c.String("since") != "" {
			var w *treeWalk
			if tee != nil {
				w = tee.walk
			}
			since, err = checkSince(c, rv, rep, w)
		}
		if err == nil && len(wits) > 0 {
			witnessed, err = checkWitnesses(c, rv, rep, tee, wits)
		}
	}
	bar.Finish()
	if err != nil {
		return err
	}
	switch {
	case c.Bool("json") && len(witnessed) == 1:
		if err := ui.WriteJSON(c, struct {
			*ledger.Report
			Witness *witnessResult `json:"witness"`
		}{jsonReport(rep), witnessed[0]}); err != nil {
			return err
		}
	case c.Bool("json") && len(witnessed) > 1:
		if err := ui.WriteJSON(c, struct {
			*ledger.Report
			Witnesses []*witnessResult `json:"witnesses"`
			Quorum    quorumResult     `json:"quorum"`
		}{jsonReport(rep), witnessed, quorumOf(c, witnessed)}); err != nil {
			return err
		}
	case c.Bool("json") && since != nil:
		if err := ui.WriteJSON(c, struct {
			*ledger.Report
			Since *sinceResult `json:"since"`
		}{jsonReport(rep), since}); err != nil {
			return err
		}
	case c.Bool("json"):
		if err := ui.WriteJSON(c, jsonReport(rep)); err != nil {
			return err
		}
	case len(args) == 1:
		describeExport(c.App.Writer, what, m)
		describeProved(c.App.Writer, m, rep.Proved)
		printReport(c.App.Writer, rep)
	default:
		if since != nil {
			printSince(c.App.Writer, since)
		}
		for _, r := range witnessed {
			printWitness(c.App.Writer, r)
		}
		if len(witnessed) > 1 {
			q := quorumOf(c, witnessed)
			paint := ui.Green
			if q.Cosigned < q.Quorum {
				paint = ui.Red
			}
			fmt.Fprintf(c.App.Writer, "%s: %d of %d witnesses cosigned a checkpoint the ledger extends (quorum %d)\n",
				paint(c.App.Writer, "quorum"), q.Cosigned, q.Witnesses, q.Quorum)
		}
		printReport(c.App.Writer, rep)
	}
	if !rep.OK {
		return fmt.Errorf("verify %s: %w", what, rep.Err())
	}
	return nil
}

// jsonReport makes sure failures encode as [] rather than null.
func jsonReport(r *ledger.Report) *ledger.Report {
	if r.Failures == nil {
		cp := *r
		cp.Failures = []*ledger.IntegrityError{}
		return &cp
	}
	return r
}

// describeExport says what an export claims to be, from its manifest.
func describeExport(w io.Writer, path string, m *ledger.Manifest) {
	switch {
	case m == nil:
		fmt.Fprintf(w, "%s: no manifest in %s; checked as a full export from genesis\n", path, ledger.BundlePath(path))
	case m.Session != "" || m.FromSeq != 0:
		fmt.Fprintf(w, "%s: segment of session %q of ledger %s: entries %d..%d, prev %s\n",
			path, m.Session, m.LedgerID, m.FromSeq, m.ToSeq, m.Prev)
		fmt.Fprintf(w, "  (entries of other sessions inside that range are included: the chain runs through them)\n")
	default:
		fmt.Fprintf(w, "%s: full export of ledger %s: entries %d..%d\n", path, m.LedgerID, m.FromSeq, m.ToSeq)
	}
}

// describeProved says in one line what an export's bundled signed
// checkpoint proved, and with which key.
func describeProved(w io.Writer, m *ledger.Manifest, p *ledger.ExportProved) {
	switch {
	case p == nil && m != nil && m.Checkpoint == "":
		fmt.Fprintln(w, "  no signed checkpoint in the bundle: the export proves its own chain only")
	case p == nil:
	case p.KeyPinned:
		fmt.Fprintf(w, "  signed checkpoint: tree %d root %s, signed by %s (the key given with --key); entries %s proved in it by inclusion, the rest up to there by the chain\n",
			p.TreeSize, p.Root, p.Key, joinSeqs(p.Entries))
	default:
		fmt.Fprintf(w, "  signed checkpoint: tree %d root %s, signed by %s, the key bundled with the export: this shows only that the export agrees with its own bundle; pin the ledger's key from elsewhere with --key (`opx ledger key` prints it); entries %s proved in it by inclusion\n",
			p.TreeSize, p.Root, p.Key, joinSeqs(p.Entries))
	}
}

func joinSeqs(seqs []uint64) string {
	if len(seqs) == 0 {
		return "(none)"
	}
	s := make([]string, len(seqs))
	for i, q := range seqs {
		s[i] = fmt.Sprint(q)
	}
	return strings.Join(s, " and ")
}

// printReport prints a verification report for people: one line when it
// is clean, else the failures (at most maxHumanFailures) and a summary.
func printReport(w io.Writer, r *ledger.Report) {
	printReportOf(w, r, ui.Plural(r.Entries, "entry", "entries"))
}

// printReportOf is printReport saying what was checked as entries
// ("1239 entries", "checked 34 of 273 entries").
func printReportOf(w io.Writer, r *ledger.Report, entries string) {
	if r.OK {
		fmt.Fprintf(w, "%s: %s, head %d %s\n", ui.Green(w, "ok"), entries, r.HeadSeq, r.HeadHash)
		return
	}
	for i, f := range r.Failures {
		if i == maxHumanFailures {
			fmt.Fprintf(w, "... and %d more (use --json)\n", r.Total()-uint64(i))
			break
		}
		fmt.Fprintf(w, "seq %d  %s  %s\n", f.Seq, f.Kind, f.Detail)
	}
	if r.FailuresOmitted > 0 {
		fmt.Fprintf(w, "failures by kind:")
		for _, k := range r.Kinds() {
			fmt.Fprintf(w, " %s %d", k, kindCount(r, k))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "%s: %s in %s, head %d %s\n", ui.Red(w, "FAILED"),
		ui.Plural(r.Total(), "failure", "failures"), entries, r.HeadSeq, r.HeadHash)
}

// kindCount is how many failures of kind k the report found.
func kindCount(r *ledger.Report, k ledger.Kind) uint64 {
	if r.FailureCounts != nil {
		return r.FailureCounts[k]
	}
	var n uint64
	for _, f := range r.Failures {
		if f.Kind == k {
			n++
		}
	}
	return n
}
