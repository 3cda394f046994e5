package cli

import (
	"fmt"

	"github.com/opx-dev/opx/ledger"
	"github.com/urfave/cli/v2"
)

// quorumResult is what several --witness proved together (--quorum K).
type quorumResult struct {
	Witnesses int  `json:"witnesses"`
	Quorum    int  `json:"quorum"`
	Cosigned  int  `json:"cosigned"` // witnesses with a cosigned checkpoint the ledger extends
	OK        bool `json:"ok"`
}

func quorumOf(c *cli.Context, rs []*witnessResult) quorumResult {
	q := quorumResult{Witnesses: len(rs), Quorum: len(rs)}
	if c.IsSet("quorum") {
		q.Quorum = c.Int("quorum")
	}
	for _, r := range rs {
		if r.OK {
			q.Cosigned++
		}
	}
	q.OK = q.Cosigned >= q.Quorum
	return q
}

// checkWitnesses checks each --witness against the ledger. A cosigned
// checkpoint the ledger does not extend (not-extension) is a failure
// whatever the quorum: some witness saw another history. A witness that
// cosigned nothing of this ledger (not-witnessed) is a failure only when
// fewer than --quorum witnesses cosigned a checkpoint the ledger extends.
func checkWitnesses(c *cli.Context, rv *ledgerReview, rep *ledger.Report, tee *teeSource, wits []*witnessCheck) ([]*witnessResult, error) {
	var out []*witnessResult
	var notWitnessed []*ledger.IntegrityError
	w, err := witnessWalk(rv, tee, wits)
	if err != nil {
		return nil, err
	}
	for _, wit := range wits {
		scratch := &ledger.Report{HeadSeq: rep.HeadSeq, OK: true}
		r, err := wit.check(c, rv, scratch, w)
		if err != nil {
			return nil, err
		}
		for _, f := range scratch.Failures {
			if f.Kind == kindNotWitnessed {
				notWitnessed = append(notWitnessed, f)
			} else {
				rep.AddFailure(f)
			}
		}
		out = append(out, r)
	}
	if q := quorumOf(c, out); !q.OK {
		for _, f := range notWitnessed {
			rep.AddFailure(f)
		}
		if len(wits) > 1 {
			rep.AddFailure(&ledger.IntegrityError{Seq: rep.HeadSeq, Kind: kindNotWitnessed,
				Detail: fmt.Sprintf("%d of %d witnesses cosigned a checkpoint the ledger extends; --quorum %d", q.Cosigned, q.Witnesses, q.Quorum)})
		}
	}
	return out, nil
}

// witnessWalk is the one walk of the ledger every witness's check reads
// its reference's root from: the verify pass's own through an engine
// (asked for every size before it started), else one walk of the file
// for all of them (each check walked it again before). Nil when no
// witness has a reference to check.
func witnessWalk(rv *ledgerReview, tee *teeSource, wits []*witnessCheck) (*treeWalk, error) {
	if tee != nil {
		return tee.walk, nil
	}
	var sizes []uint64
	for _, wit := range wits {
		if wit.found && wit.givenBad == "" {
			sizes = append(sizes, wit.sinceSize())
		}
	}
	if len(sizes) == 0 {
		return nil, nil
	}
	w, err := walkTree(sinceSourceOf(rv), sizes...)
	if err != nil {
		return nil, fmt.Errorf("--witness: recompute the tree: %w", err)
	}
	return w, nil
}
