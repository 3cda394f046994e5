package cli

import (
	"errors"
	"fmt"
	"github.com/opx-dev/opx/cli/internal/liveledger"
	"io"

	"github.com/opx-dev/opx/chronicle"
	"github.com/opx-dev/opx/cli/internal/ledgerloc"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"github.com/urfave/cli/v2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// review is a ledger opened for the snapshot commands: the file itself
// (offline), or the running engine's LedgerService when the engine holds
// the file. Index (openChronicleReview) holds every snapshot and what
// became of it; Workspace is the workspace the last engine.started names
// ("" if none).
type review struct {
	src       chronicle.Source
	file      *ledger.Ledger // the file, when read offline
	index     *chronicle.Index
	workspace string
	path      string // the ledger file, for messages
	live      bool   // read through a running engine
	close     func() error
}

func (r *review) Close() error { return r.close() }

// openChronicleReview opens c's ledger for reading and folds its
// snapshots. An explicit --ledger is always read offline.
func openChronicleReview(c *cli.Context) (*review, error) {
	r, err := openReviewSource(c)
	if err != nil {
		return nil, err
	}
	r.index = chronicle.NewIndex()
	err = r.src.Range(0, ^uint64(0), func(e ledger.Entry) error {
		if e.Type == event.TypeEngineStarted {
			if p, err := event.Decode(e); err == nil {
				r.workspace = p.(*event.EngineStarted).Workspace
			}
		}
		return r.index.Apply(e)
	})
	if err != nil {
		r.close()
		return nil, fmt.Errorf("read snapshots from %s: %w", r.path, err)
	}
	return r, nil
}

// openReviewSource opens c's ledger for reading: the file, or the running
// engine's LedgerService while the engine holds it. A ledger named
// outright (--ledger, --source) is read through the server registered in
// its own directory (an engine, or a fleet collector serving its
// mirrors), never through the workspace's engine.
func openReviewSource(c *cli.Context) (*review, error) {
	path, err := ledgerloc.Path(c)
	if err != nil {
		return nil, err
	}
	return openReviewSourceAt(c, path, ledgerloc.Named(c))
}

// openReviewSourceAt is openReviewSource for the ledger at path; named
// says the user named the file (so the workspace's engine is not asked).
func openReviewSourceAt(c *cli.Context, path string, named bool) (*review, error) {
	r := &review{path: path}
	if err := ledgerloc.RefuseEmpty(path); err != nil {
		return nil, err
	}
	l, err := ledger.OpenReadOnly(path)
	if err != nil {
		err = ledgerloc.ExplainOpen(path, err)
	}
	switch {
	case err == nil:
		r.src, r.file, r.close = l, l, l.Close
	case errors.Is(err, ledger.ErrLocked):
		var ec *engineClient
		if named {
			rl, derr := liveledger.Dial(c, path)
			if derr != nil {
				return nil, err // the file is locked and nothing registered beside it answers: say so
			}
			ec = &engineClient{conn: rl.Conn(), ledger: rl.Client(), ctx: rl.Ctx()}
		} else {
			var derr error
			if ec, derr = dialEngine(c); derr != nil {
				return nil, err // the file is locked and no engine answers: say so
			}
		}
		r.src, r.close, r.live = &engineSource{ec: ec}, ec.Close, true
	default:
		return nil, err
	}
	return r, nil
}

// readProjection calls fn with projection p of the review's ledger: the
// file's (folded in memory if the file's is missing or stale), or, read
// through a running engine, a fold of the entries it streams.
func (r *review) readProjection(p ledger.Projection, fn func(ledger.Bucket) error) error {
	if r.file != nil {
		return r.file.ReadProjection(p, fn)
	}
	m, err := ledger.FoldProjection(r.src.(ledger.Ranger), p, ^uint64(0))
	if err != nil {
		return err
	}
	return fn(m)
}

// readReviewProjection opens c's ledger for reading (openReviewSource)
// and calls fn with its projection p.
func readReviewProjection(c *cli.Context, p ledger.Projection, fn func(ledger.Bucket) error) error {
	r, err := openReviewSource(c)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := r.readProjection(p, fn); err != nil {
		return fmt.Errorf("read %s from %s: %w", p.Name(), r.path, err)
	}
	return nil
}

// engineSource reads the ledger through a running engine. Blobs are
// hash-checked here. Once verified holds the hashes of the entries a
// verification checked (replay and report verify first), Range reads no
// further than they go and refuses an entry whose bytes are not the ones
// checked: the engine is only a pipe, and a second read must not be
// answered with other bytes than the first.
type engineSource struct {
	ec       *engineClient
	verified []ledger.Hash // verified[seq]; nil: not verified (snapshots, diff)
}

func (s *engineSource) Range(from, to uint64, fn func(ledger.Entry) error) error {
	if s.verified != nil {
		if from >= uint64(len(s.verified)) {
			return nil
		}
		to = min(to, uint64(len(s.verified))-1)
		inner := fn
		fn = func(e ledger.Entry) error {
			if e.Seq >= uint64(len(s.verified)) || ledger.Sum(e.Raw) != s.verified[e.Seq] {
				return &ledger.IntegrityError{Seq: e.Seq, Kind: ledger.KindHashMismatch,
					Detail: "the engine sent this entry with other bytes than it sent to be verified"}
			}
			return inner(e)
		}
	}
	if to == ^uint64(0) {
		to = 0 // the service's "to the head"
	}
	stream, err := s.ec.ledger.StreamEntries(s.ec.ctx, &opxv1.StreamEntriesRequest{FromSeq: from, ToSeq: to})
	if err != nil {
		return err
	}
	for {
		m, err := stream.Recv()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		e, err := ledger.ParseEntry(m.Raw)
		if err != nil {
			return &ledger.IntegrityError{Seq: m.Seq, Kind: ledger.KindUnreadable, Detail: err.Error()}
		}
		if e.Seq != m.Seq {
			return &ledger.IntegrityError{Seq: m.Seq, Kind: ledger.KindSeqMismatch, Detail: fmt.Sprintf("entry says seq %d", e.Seq)}
		}
		if err := fn(e); err != nil {
			return err
		}
	}
}

func (s *engineSource) GetBlob(h ledger.Hash) ([]byte, error) {
	resp, err := s.ec.ledger.GetBlob(s.ec.ctx, &opxv1.GetBlobRequest{Hash: h.String()})
	switch status.Code(err) {
	case codes.OK:
	case codes.NotFound:
		return nil, fmt.Errorf("blob %s: %w", h, ledger.ErrNotFound)
	case codes.DataLoss:
		return nil, &ledger.IntegrityError{Kind: ledger.KindBlobCorrupt, Detail: status.Convert(err).Message()}
	default:
		return nil, err
	}
	if got := ledger.Sum(resp.Content); got != h {
		return nil, &ledger.IntegrityError{Kind: ledger.KindBlobCorrupt, Detail: fmt.Sprintf("blob %s hashes to %s", h, got),
			Expected: h.String(), Found: got.String()}
	}
	return resp.Content, nil
}
