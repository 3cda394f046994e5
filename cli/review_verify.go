package cli

import (
	"fmt"
	"io"

	"github.com/opx-dev/opx/cli/internal/ui"
	"github.com/opx-dev/opx/cli/internal/usage"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/tlog"
	"github.com/opx-dev/opx/replay"
	"github.com/urfave/cli/v2"
)

// reviewFlags are the verification flags of opx replay and opx report.
func reviewFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "full-verify", Usage: "verify every entry of the ledger strictly, as opx ledger verify --strict does, rather than prove the session against the latest signed checkpoint"},
		keyFlag("check the signed checkpoint with verifier `KEY` (or a file holding it, saved elsewhere) rather than the key the ledger recorded"),
	}
}

// reviewVerifyHelp is the paragraph of replay's and report's help on how
// they verify.
const reviewVerifyHelp = "Verification: on a ledger file with signed checkpoints, the latest signed checkpoint is checked\n" +
	"(its signature, with the key the ledger recorded or --key), every entry shown and every entry in\n" +
	"the session's span is proved against it (an inclusion proof, or the chain from a proved entry) and\n" +
	"checked strictly (canonical form, payloads, causal order), and every entry after the checkpoint is\n" +
	"checked in full; the other entries are not read (`opx ledger verify`, or --full-verify, checks them\n" +
	"all). Without a signed checkpoint, or through a running engine, the whole ledger is verified strictly.\n" +
	"The output says which was done.\n\n"

// verifiedSession is a session's timeline with how the ledger under it
// was verified.
type verifiedSession struct {
	rep *ledger.Report
	how *ledger.ReviewVerification
	t   *replay.Timeline // nil when it was not built (verification failed first)
	// buildErr is why the timeline could not be built (an unknown
	// session): returned after the verification is printed.
	buildErr error
}

// verifySession verifies what a review of session shows and builds its
// timeline. build says whether to build the timeline even when the
// ledger does not verify in full first (replay without --force does not).
func verifySession(c *cli.Context, ss *sessionSource, session string, buildAnyway bool) (*verifiedSession, error) {
	key := ""
	if c.String("key") != "" {
		v, err := verifierFlag(c)
		if err != nil {
			return nil, err
		}
		key = v.String()
	}
	// An unknown id is said first and alone: verifying a whole ledger
	// and printing "ok" before "unknown session" reads as if the session
	// had verified. The lookup stops at the session's first entry.
	if err := lookupSession(c, ss, ss.src, session); err != nil {
		return nil, err
	}
	unsigned := false // the timeline was built, but no signed checkpoint proves it
	if l := ss.file; l != nil && !c.Bool("full-verify") {
		rv := l.NewReview()
		t, err := buildTimelineFrom(c, ss, rv, session)
		if err == nil {
			opts := event.ReviewStrictOptions() // the session's entries only
			// The checkpoints after the signed one are checked against
			// the keys recorded before them, as verify --strict does.
			var keys []event.RecordedKey
			seqs, vkeys := rv.RecordedKeys()
			for i := range seqs {
				if v, err := tlog.ParseVerifierKey(vkeys[i]); err == nil {
					keys = append(keys, event.RecordedKey{Seq: seqs[i], Key: event.Key{VKey: vkeys[i]}, Verifier: v})
				}
			}
			opts.CheckCheckpoint = event.CheckCheckpoints(l.ID(), keys)
			rep, how, err := rv.Verify(t.Read(), ledger.ReviewOptions{Verify: opts, Span: [2]uint64{t.FirstSeq, t.LastSeq}, Key: key})
			if err != nil {
				return nil, err
			}
			if how != nil {
				how.Summary = checkpointSummary(how, len(t.Read()))
				return &verifiedSession{rep: rep, how: how, t: t}, nil
			}
			unsigned = true
		}
		// No signed checkpoint, or a timeline that cannot be built (an
		// unknown session, a ledger that does not read): the full check
		// runs and is printed first, as it always was.
	}
	if c.IsSet("key") && ss.file == nil {
		return nil, usage.Errorf(c, "--key checks a ledger file's signed checkpoint; through a running engine the whole ledger is verified")
	}
	rep, err := ss.verify()
	if err != nil {
		return nil, err
	}
	how := &ledger.ReviewVerification{Mode: "full", Summary: "every entry of the ledger verified strictly (chain, head, blobs, canonical form, payloads, causal order)"}
	switch {
	case unsigned && key != "":
		// A pinned key that signed nothing here proves nothing: the
		// notes (and the keys recorded) may have been stripped.
		rep.AddFailure(&ledger.IntegrityError{Seq: rep.HeadSeq, Kind: ledger.KindCheckpoint,
			Detail: "--key was given, but the ledger holds no signed checkpoint to check with it"})
		how.Summary += "; the ledger has no signed checkpoint, so --key checked nothing"
	case unsigned:
		how.Summary += "; the ledger has no signed checkpoint to prove the session against"
	}
	vs := &verifiedSession{rep: rep, how: how}
	if rep.OK || buildAnyway {
		vs.t, vs.buildErr = buildTimeline(c, ss, session)
	}
	return vs, nil
}

// checkpointSummary says in one line how a review was verified against
// a checkpoint.
func checkpointSummary(h *ledger.ReviewVerification, shown int) string {
	whose := fmt.Sprintf("the key the ledger recorded at seq %d (pin one from elsewhere with --key)", h.KeySeq)
	if h.KeysRecorded > 1 {
		whose = fmt.Sprintf("the last of the %d keys the ledger recorded, at seq %d: the signing key was replaced (pin one from elsewhere with --key)", h.KeysRecorded, h.KeySeq)
	}
	if h.KeyPinned {
		whose = "the key given with --key"
	}
	return fmt.Sprintf("checkpoint at seq %d (tree %d) signed by %s, %s; %s shown and the session's span proved against it "+
		"(%d in all) and checked strictly; %s after it checked in full; the rest of the ledger was not read "+
		"(opx ledger verify, or --full-verify, checks it all)", h.CheckpointSeq, h.TreeSize, h.Key, whose,
		ui.Plural(uint64(shown), "entry", "entries"), h.Proved, ui.Plural(h.After, "entry", "entries"))
}

// printReviewReport is printReport for replay and report, which may have
// checked part of the ledger (a session proved against a signed
// checkpoint): the count then says so, "checked 34 of 273 entries",
// rather than pass for the ledger's size.
func printReviewReport(w io.Writer, r *ledger.Report) {
	if total := r.HeadSeq + 1; r.Entries < total {
		printReportOf(w, r, fmt.Sprintf("checked %d of %s", r.Entries, ui.Plural(total, "entry", "entries")))
		return
	}
	printReport(w, r)
}

// printVerifiedBy prints how the ledger was verified, in one line.
func printVerifiedBy(w io.Writer, h *ledger.ReviewVerification) {
	fmt.Fprintf(w, "verified: %s\n", h.Summary)
}
