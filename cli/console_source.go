package cli

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/opx-dev/opx/cli/internal/console"
	"github.com/opx-dev/opx/engine/redrive"
	"github.com/opx-dev/opx/ledger"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"github.com/opx-dev/opx/replay"
	"github.com/opx-dev/opx/replay/projection"
	"github.com/opx-dev/opx/shield"
	"github.com/urfave/cli/v2"
)

// consoleSource is the ledger `opx serve` shows, read by the review
// commands' own code: the sessions as `opx sessions` lists them, a
// session verified and built as `opx replay` does, proofs as `opx ledger
// prove`, the report as `opx report`, the segment as `opx ledger export
// --session`. Each request opens the ledger (the file read-only, or the
// running engine that holds it) as one run of those commands does, so a
// console never keeps an engine from starting.
type consoleSource struct {
	c     *cli.Context
	about console.About

	mu       sync.Mutex
	outcomes *ledger.MemBucket // projection.Outcomes, folded up to next-1
	next     uint64

	// What the pages showed, kept while the ledger's head stays where it
	// was: an append-only ledger whose head (seq and hash) has not moved
	// holds what it held, and every answer below is a function of it.
	// A new entry (an engine's, a note) moves the head and drops them.
	cacheMu  sync.Mutex
	cacheAt  ledger.Head
	list     *console.SessionList
	views    map[string]*console.SessionView
	signedAt *evidence // the checkpoints' evidence at cacheAt

	// evidence reads the checkpoints and cosignatures incrementally.
	evidence consoleEvidence
}

// reviewHead is the head of r's ledger: the file's, or the durable head
// the engine reports.
func reviewHead(r *review) (ledger.Head, error) {
	if r.file != nil {
		return r.file.Head()
	}
	es, ok := r.src.(*engineSource)
	if !ok {
		return ledger.Head{}, fmt.Errorf("no head for %s", r.path)
	}
	h, err := es.ec.ledger.Head(es.ec.ctx, &opxv1.HeadRequest{})
	if err != nil {
		return ledger.Head{}, fmt.Errorf("ask the engine for the ledger head: %w", err)
	}
	hash, err := ledger.ParseHash(h.Hash)
	if err != nil {
		return ledger.Head{}, err
	}
	return ledger.Head{LedgerID: h.LedgerId, Seq: h.Seq, Hash: hash}, nil
}

// viewCacheSize bounds the session views kept for one head.
const viewCacheSize = 16

// cached returns the cache for head h, emptied when h is not the head it
// was filled at. The caller holds cacheMu.
func (s *consoleSource) cachedAt(h ledger.Head) {
	if h != s.cacheAt || s.views == nil {
		s.cacheAt, s.list, s.views, s.signedAt = h, nil, map[string]*console.SessionView{}, nil
	}
}

func newConsoleSource(c *cli.Context) (*consoleSource, error) {
	ss, err := openSessionSource(c)
	if err != nil {
		return nil, err
	}
	defer ss.Close()
	return &consoleSource{c: c, about: console.About{Path: ss.path, LedgerID: ss.id, Live: ss.live},
		outcomes: ledger.NewMemBucket()}, nil
}

func (s *consoleSource) About() console.About { return s.about }

// Sessions reads the sessions projection as `opx sessions` does, and the
// outcome counts from a fold kept here and caught up entry by entry.
func (s *consoleSource) Sessions(ctx context.Context) (*console.SessionList, error) {
	r, err := openReviewSource(s.c)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	h, err := reviewHead(r)
	if err != nil {
		return nil, err
	}
	s.cacheMu.Lock()
	s.cachedAt(h)
	cached := s.list
	s.cacheMu.Unlock()
	if cached != nil {
		return cached, nil
	}
	out, err := s.sessions(r)
	if err != nil {
		return nil, err
	}
	s.cacheMu.Lock()
	if s.cacheAt == h {
		s.list = out
	}
	s.cacheMu.Unlock()
	return out, nil
}

// sessions reads the listing from r: the sessions projection, and the
// outcomes fold caught up.
func (s *consoleSource) sessions(r *review) (*console.SessionList, error) {
	var list []projection.Session
	err := r.readProjection(projection.Sessions{}, func(b ledger.Bucket) error {
		list = projection.ReadSessions(b)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("sessions of %s: %w", r.path, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p := projection.Outcomes{}
	err = r.src.Range(s.next, ^uint64(0), func(e ledger.Entry) error {
		if e.Seq != s.next {
			return &ledger.IntegrityError{Seq: e.Seq, Kind: ledger.KindSeqMismatch, Detail: fmt.Sprintf("expected entry %d", s.next)}
		}
		if err := p.Apply(s.outcomes, &e); err != nil {
			return err
		}
		s.next++
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("outcomes of %s: %w", r.path, err)
	}
	out := &console.SessionList{Days: projection.ReadDayVerdicts(s.outcomes), Sessions: make([]console.SessionRow, len(list))}
	if s.next > 0 {
		out.Head = s.next - 1
	}
	for i, ses := range list {
		out.Sessions[i] = console.SessionRow{Session: ses, Outcomes: projection.ReadOutcomes(s.outcomes, ses.ID)}
	}
	return out, nil
}

// Session verifies and builds a session as `opx replay --force` does
// (the timeline is shown with the failures when the ledger does not
// verify), then reads the hashes of its entries and the checkpoints
// that cover them.
func (s *consoleSource) Session(ctx context.Context, id string) (*console.SessionView, error) {
	ss, err := openSessionSource(s.c)
	if err != nil {
		return nil, err
	}
	defer ss.Close()
	h, err := reviewHead(ss.review)
	if err != nil {
		return nil, err
	}
	s.cacheMu.Lock()
	s.cachedAt(h)
	cached := s.views[id]
	s.cacheMu.Unlock()
	if cached != nil {
		return cached, nil
	}
	v, err := s.session(ss, id, h)
	if err != nil {
		return nil, err
	}
	s.cacheMu.Lock()
	if s.cacheAt == h {
		if len(s.views) >= viewCacheSize {
			clear(s.views)
		}
		s.views[id] = v
	}
	s.cacheMu.Unlock()
	return v, nil
}

// session is Session read from ss, whose head is h.
func (s *consoleSource) session(ss *sessionSource, id string, h ledger.Head) (*console.SessionView, error) {
	vs, err := verifySession(s.c, ss, id, true)
	if errors.Is(err, replay.ErrUnknownSession) {
		return nil, fmt.Errorf("%w: %w", console.ErrNotFound, err)
	}
	if err != nil {
		return nil, err
	}
	if vs.buildErr != nil {
		return nil, vs.buildErr
	}
	t := vs.t
	v := &console.SessionView{Timeline: t, Report: vs.rep, How: vs.how, Hashes: map[uint64]string{}}
	if v.Changes, err = replay.Changes(ss.src, t, nil); err != nil {
		return nil, err
	}
	if err := entryHashes(ss.review, t.Read(), v.Hashes); err != nil {
		return nil, err
	}
	ev := s.evidenceAt(ss.review, h)
	v.SignedTree, v.SignedSeq, v.Cosigned, v.Witnesses = ev.SignedTree, ev.SignedSeq, ev.Cosigned, ev.Witnesses
	return v, nil
}

// entryHashes sets hashes[seq] to the BLAKE3 of entry seq's stored bytes
// for each seq of read (ascending), reading only those entries: each run
// of consecutive seqs is one range (a timeline reads its session's
// entries and a few far behind them, such as the engine's start), and a
// file's entries are hashed as stored, without parsing them.
func entryHashes(r *review, read []uint64, hashes map[uint64]string) error {
	for i := 0; i < len(read); {
		j := i + 1
		for j < len(read) && read[j] == read[j-1]+1 {
			j++
		}
		lo, hi := read[i], read[j-1]
		var err error
		if r.file != nil {
			err = r.file.RangeRaw(lo, hi, func(seq uint64, raw []byte) error {
				hashes[seq] = ledger.Sum(raw).String()
				return nil
			})
		} else {
			err = r.src.Range(lo, hi, func(e ledger.Entry) error {
				hashes[e.Seq] = ledger.Sum(e.Raw).String()
				return nil
			})
		}
		if err != nil {
			return err
		}
		i = j
	}
	return nil
}

// evidenceAt is the checkpoints' evidence at head h (consoleEvidence) of
// r's ledger, kept with the other answers of h.
func (s *consoleSource) evidenceAt(r *review, h ledger.Head) evidence {
	s.cacheMu.Lock()
	at := s.signedAt
	if s.cacheAt != h {
		at = nil
	}
	s.cacheMu.Unlock()
	if at != nil {
		return *at
	}
	rv := &ledgerReview{path: r.path, local: r.file}
	if r.file == nil {
		var err error
		if rv, err = openReviewOrEngine(s.c); err != nil {
			return evidence{}
		}
		defer rv.Close()
	}
	ev := s.evidence.at(rv, h)
	s.cacheMu.Lock()
	if s.cacheAt == h {
		s.signedAt = &ev
	}
	s.cacheMu.Unlock()
	return ev
}

// Proof is `opx ledger prove SEQ --json`.
func (s *consoleSource) Proof(ctx context.Context, seq uint64) ([]byte, error) {
	rv, err := openReviewOrEngine(s.c)
	if err != nil {
		return nil, err
	}
	defer rv.Close()
	var p interface{ Marshal() ([]byte, error) }
	if rv.local != nil {
		p, _, err = prove(s.c, rv.local, seq)
	} else {
		p, _, err = proveThroughEngine(s.c, rv, seq)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", console.ErrNotFound, err)
	}
	return p.Marshal()
}

// Report is `opx report --no-workspace -o - SESSION`.
func (s *consoleSource) Report(ctx context.Context, id string, w io.Writer) error {
	ss, err := openSessionSource(s.c)
	if err != nil {
		return err
	}
	defer ss.Close()
	vs, err := verifySession(s.c, ss, id, true)
	if errors.Is(err, replay.ErrUnknownSession) {
		return fmt.Errorf("%w: %w", console.ErrNotFound, err)
	}
	if err != nil {
		return err
	}
	if vs.buildErr != nil {
		return vs.buildErr
	}
	changes, err := replay.Changes(ss.src, vs.t, nil)
	if err != nil {
		return err
	}
	html, err := renderReport(ss, vs.rep, vs.how, vs.t, changes,
		"The workspace was not read (opx serve): post-state content comes from the ledger only.")
	if err != nil {
		return err
	}
	_, err = w.Write(html)
	return err
}

// Export is `opx ledger export --session ID -o session.jsonl` into a
// temporary directory, written to w as one tar archive: the segment, and
// its bundle of blobs and manifest (with the proofs).
func (s *consoleSource) Export(ctx context.Context, id string, w io.Writer) error {
	rv, err := openReviewOrEngine(s.c)
	if err != nil {
		return err
	}
	defer rv.Close()
	dir, err := os.MkdirTemp("", "opx-serve-export-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "session.jsonl")
	opts := ledger.ExportOptions{Session: id}
	if rv.local != nil {
		_, err = rv.local.ExportFile(out, opts)
	} else {
		_, err = ledger.ExportSourceFile(rv.remote, out, opts)
	}
	if err != nil {
		return err
	}
	tw := tar.NewWriter(w)
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		info, err := d.Info()
		if err != nil {
			return err
		}
		h, err := tar.FileInfoHeader(info, "")
		if err != nil {
			return err
		}
		h.Name = filepath.ToSlash(rel)
		if err := tw.WriteHeader(h); err != nil || d.IsDir() {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(tw, f)
		return err
	})
	if err != nil {
		return err
	}
	return tw.Close()
}

// Entry is entry seq's stored bytes.
func (s *consoleSource) Entry(ctx context.Context, seq uint64) ([]byte, error) {
	r, err := openReviewSource(s.c)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var raw []byte
	err = r.src.Range(seq, seq, func(e ledger.Entry) error {
		if e.Seq == seq {
			raw = append([]byte(nil), e.Raw...)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if raw == nil {
		return nil, fmt.Errorf("%w: entry %d", console.ErrNotFound, seq)
	}
	return raw, nil
}

// Blob is a blob, hash-checked by the ledger (or here, through the engine).
func (s *consoleSource) Blob(ctx context.Context, hash string) ([]byte, error) {
	h, err := ledger.ParseHash(hash)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", console.ErrBadRequest, err)
	}
	r, err := openReviewSource(s.c)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	b, err := r.src.GetBlob(h)
	if errors.Is(err, ledger.ErrNotFound) {
		return nil, fmt.Errorf("%w: %w", console.ErrNotFound, err)
	}
	return b, err
}

// WhatIf is `opx replay SESSION --policy FILE`: the ledger verified (one
// that does not verify is refused, as the command refuses it), the
// session's proposals re-evaluated under policy. Nothing is recorded.
func (s *consoleSource) WhatIf(ctx context.Context, id string, policy []byte) (*redrive.WhatIfReport, error) {
	p, err := shield.ParsePolicy(policy)
	if err != nil {
		return nil, fmt.Errorf("%w: policy: %w", console.ErrBadRequest, err)
	}
	ss, err := openSessionSource(s.c)
	if err != nil {
		return nil, err
	}
	defer ss.Close()
	if err := replay.Lookup(ss.src, id, 0); errors.Is(err, replay.ErrUnknownSession) {
		return nil, fmt.Errorf("%w: %w", console.ErrNotFound, err)
	}
	rep, err := ss.verify()
	if err != nil {
		return nil, err
	}
	if !rep.OK {
		return nil, fmt.Errorf("the ledger does not verify (%d failures): nothing is re-judged from it", len(rep.Failures))
	}
	rec, err := loadSession(ss, id)
	if err != nil {
		return nil, err
	}
	return redrive.WhatIf(rec, p)
}
