package console

import (
	"context"
	"io"
	"time"

	"github.com/opx-dev/opx/engine/redrive"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/replay"
	"github.com/opx-dev/opx/replay/projection"
)

// Source is the ledger the console shows, read and checked by the code of
// the review commands (the cli package builds it). Every method may be
// called from many requests at once. What it returns may be shared
// between requests (kept while the ledger's head does not move): the
// pages never change it.
type Source interface {
	// About names the ledger: where it is and how it is read.
	About() About
	// Sessions returns every session, off-the-record ones included, with
	// their outcome counts, and the verdicts per day: from the
	// projections, not the timelines.
	Sessions(ctx context.Context) (*SessionList, error)
	// Session verifies the ledger under session as `opx replay` does and
	// returns its timeline with how each entry was checked.
	Session(ctx context.Context, id string) (*SessionView, error)
	// Proof returns the inclusion proof of entry seq, checked, as
	// `opx ledger prove --json` writes it.
	Proof(ctx context.Context, seq uint64) ([]byte, error)
	// Report writes session's HTML report as `opx report` writes it.
	Report(ctx context.Context, id string, w io.Writer) error
	// Export writes session's JSONL segment with its blobs and manifest
	// (the proofs) as `opx ledger export --session` writes them, in one
	// tar archive.
	Export(ctx context.Context, id string, w io.Writer) error
	// Entry returns the stored bytes of entry seq, checked against the
	// hash the verification saw.
	Entry(ctx context.Context, seq uint64) ([]byte, error)
	// Blob returns the blob whose BLAKE3 hash is hash (hex), checked.
	Blob(ctx context.Context, hash string) ([]byte, error)
	// WhatIf re-evaluates every recorded proposal of session under the
	// policy text (YAML) as `opx replay --policy` does, recording
	// nothing; ErrBadRequest when policy is not a valid policy.
	WhatIf(ctx context.Context, session string, policy []byte) (*redrive.WhatIfReport, error)

	// Approvals returns the approvals waiting in the running engine that
	// holds the ledger, as `opx approve` lists them; ErrOffline when no
	// engine holds it (then nothing waits).
	Approvals(ctx context.Context) ([]Pending, error)
	// Resolve answers approval id as `opx approve` and `opx deny` do:
	// the engine records approval.resolved by this client, with reason,
	// before the call runs (or is refused).
	Resolve(ctx context.Context, id string, approve bool, reason string) (*Resolved, error)
	// Annotate appends a ledger.note of session about entry about, as
	// `opx ledger note --session --about` does (through the engine while
	// one holds the ledger), and returns its seq once durable.
	Annotate(ctx context.Context, session string, about uint64, text string) (uint64, error)
	// Follow calls fn with each entry that becomes durable, as
	// `opx ledger follow` checks and prints them (each follows the one
	// before it), from the last few on, until ctx ends or fn fails.
	Follow(ctx context.Context, fn func(Followed) error) error
}

// Pending is an approval waiting for a human.
type Pending struct {
	ID, Session, SubAgent, CallID, Tool string
	// Arguments are the call's arguments exactly as proposed (canonical
	// JSON); Reason is why Shield escalated it.
	Arguments, Reason string
	Expires           time.Time
	Seq               uint64 // approval.requested
}

// Resolved is an answer recorded.
type Resolved struct {
	Approved         bool
	Tool, CallID, By string
	Seq              uint64 // approval.resolved
}

// Followed is one entry of the follow stream: what a page needs to know
// to refresh (never its content).
type Followed struct {
	Seq     uint64 `json:"seq"`
	Type    string `json:"type"`
	Session string `json:"session,omitempty"`
}

// About names the ledger a console shows.
type About struct {
	Path     string // the ledger file as named
	LedgerID string
	Live     bool // read through the running engine that holds it
}

// SessionList is every session of a ledger, as the projections hold them.
type SessionList struct {
	Sessions []SessionRow
	Days     []projection.DayVerdicts
	// Head is the seq of the last entry folded.
	Head uint64
}

// SessionRow is one session of the listing.
type SessionRow struct {
	projection.Session
	Outcomes projection.SessionOutcomes
}

// SessionView is one session's timeline as `opx replay` builds it, with
// how its entries were checked.
type SessionView struct {
	Timeline *replay.Timeline
	// Changes are its snapshots' diffs (replay.Changes).
	Changes []replay.FileChange
	Report  *ledger.Report
	How     *ledger.ReviewVerification
	// Hashes are the stored entries' hashes (BLAKE3, hex) by seq, for the
	// entries the timeline was built from.
	Hashes map[uint64]string
	// SignedTree is the size of the latest signed checkpoint's tree (0:
	// none): the entries below it have an inclusion proof.
	SignedTree uint64
	// SignedSeq is the ledger.checkpoint entry that signed it.
	SignedSeq uint64
	// Cosigned is the largest tree a witness cosigned (0: none), and by
	// whom.
	Cosigned  uint64
	Witnesses []string
}
