package grpcapi

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/engine/checkpoint"
	"github.com/opx-dev/opx/internal/textclip"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ledgerService lets clients read the ledger while the engine holds the
// file: it only ever reads.
type ledgerService struct {
	opxv1.UnimplementedLedgerServiceServer
	led *ledger.Ledger
	// ownPlan reports a rollback under way in this process (nil: none).
	ownPlan func(seq uint64) bool
	// stopping is closed when the server stops: followers leave.
	stopping func() <-chan struct{}
	// latest is the last signed checkpoint Prove found, and how far it
	// read: each prove reads only what was appended since.
	latest checkpoint.Latest
	// fresh records a signed checkpoint for a prove that the latest does
	// not cover, rate-bounded (nil: none are recorded on demand, as in the
	// collector's read-only mirrors).
	fresh *checkpoint.OnDemand
}

// NewReadOnlyLedgerService serves the ledger service of l outside an
// engine (the fleet collector's mirrors): the same reads; AppendNote
// appends only what l accepts. Followers leave when stopping is closed.
// The caller authenticates every call.
func NewReadOnlyLedgerService(l *ledger.Ledger, stopping <-chan struct{}) opxv1.LedgerServiceServer {
	return &ledgerService{led: l, stopping: func() <-chan struct{} { return stopping }}
}

func (s *ledgerService) l() *ledger.Ledger { return s.led }

// Head returns the durable head.
func (s *ledgerService) Head(context.Context, *opxv1.HeadRequest) (*opxv1.HeadResponse, error) {
	h, err := engine.DurableHead(s.l())
	if err != nil {
		return nil, status.Errorf(codes.Internal, "%v", err)
	}
	layout, bucket, err := s.l().LocalSource(h).(ledger.TileSource).TreeLayout()
	if err != nil {
		return nil, status.Errorf(codes.Internal, "%v", err)
	}
	return &opxv1.HeadResponse{LedgerId: h.LedgerID, Seq: h.Seq, Hash: h.Hash.String(), Format: ledger.Format,
		TreeLayout: layout, TreeBucket: bucket}, nil
}

// ReadTiles streams the stored tiles of the tree of size entries, never
// past the durable head, each batch read in its own short transaction.
func (s *ledgerService) ReadTiles(req *opxv1.ReadTilesRequest, stream opxv1.LedgerService_ReadTilesServer) error {
	h, err := engine.DurableHead(s.l())
	if err != nil {
		return status.Errorf(codes.Internal, "%v", err)
	}
	size := min(req.Size, h.Seq+1)
	msg, n := &opxv1.TileBatch{}, 0
	err = s.l().LocalSource(h).(ledger.TileSource).Tiles(size, func(key, tile []byte) error {
		msg.Tiles = append(msg.Tiles, &opxv1.Tile{Key: key, Data: tile})
		if n += len(key) + len(tile); n >= batchBytes {
			if err := stream.Send(msg); err != nil {
				return err
			}
			msg, n = &opxv1.TileBatch{}, 0
		}
		return nil
	})
	if err != nil {
		return status.Errorf(codes.DataLoss, "%v", err)
	}
	if len(msg.Tiles) > 0 {
		return stream.Send(msg)
	}
	return nil
}

// Verify verifies the ledger up to its durable head as `opx ledger
// verify` does offline, strict options and signed checkpoints included.
// It reads through LocalSource, each batch in its own short read
// transaction: one transaction across the whole file would block bbolt's
// remap, and with it every commit of the engine, for as long as it ran.
func (s *ledgerService) Verify(_ context.Context, req *opxv1.VerifyRequest) (*opxv1.VerifyResponse, error) {
	h, err := engine.DurableHead(s.l())
	if err != nil {
		return nil, status.Errorf(codes.Internal, "%v", err)
	}
	src := s.l().LocalSource(h)
	opts := ledger.VerifyOptions{}
	if req.Strict {
		// Each signed checkpoint against the key recorded before it.
		if opts, err = event.StrictOptionsForSource(src); err != nil {
			return nil, status.Errorf(codes.Internal, "%v", err)
		}
		// A rollback this engine is carrying out has its plan on record
		// and its outcome still to come: it is not an interrupted one.
		end := opts.CheckEnd
		opts.CheckEnd = func() []*ledger.IntegrityError {
			var out []*ledger.IntegrityError
			for _, f := range end() {
				if s.ownPlan == nil || !s.ownPlan(f.Seq) {
					out = append(out, f)
				}
			}
			return out
		}
	}
	rep, err := ledger.VerifySource(src, opts)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "%v", err)
	}
	b, err := json.Marshal(rep)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "%v", err)
	}
	return &opxv1.VerifyResponse{ReportJson: b}, nil
}

// StreamEntries streams durable entries in a range, optionally of one
// session.
func (s *ledgerService) StreamEntries(req *opxv1.StreamEntriesRequest, stream opxv1.LedgerService_StreamEntriesServer) error {
	h, err := engine.DurableHead(s.l())
	if err != nil {
		return status.Errorf(codes.Internal, "%v", err)
	}
	to := req.ToSeq
	if to == 0 || to > h.Seq {
		to = h.Seq
	}
	if req.FromSeq > to {
		return nil
	}
	for from := req.FromSeq; from <= to; {
		batch, err := readBatch(s.l(), from, to)
		if err != nil {
			return status.Errorf(codes.DataLoss, "%v", err)
		}
		if len(batch) == 0 {
			return nil
		}
		for _, en := range batch {
			if req.Session != "" {
				e, err := ledger.ParseEntry(en.Raw)
				if err != nil {
					return status.Errorf(codes.DataLoss, "entry %d: %v", en.Seq, err)
				}
				if e.Session != req.Session {
					continue
				}
			}
			if err := stream.Send(en); err != nil {
				return err
			}
		}
		if from = batch[len(batch)-1].Seq + 1; from == 0 {
			return nil
		}
	}
	return nil
}

// Follow streams entries from a seq on, then new ones as they become
// durable (the writer's watermark), until the client leaves. Entries are
// read in short transactions (readBatch) and sent outside them, so a slow
// follower never holds a read transaction open.
func (s *ledgerService) Follow(req *opxv1.FollowRequest, stream opxv1.LedgerService_FollowServer) error {
	next := req.FromSeq
	stopping := s.stopping()
	for {
		w, err := s.l().Watermark()
		if err != nil {
			return status.Errorf(codes.Unavailable, "%v", err)
		}
		for next <= w.Durable {
			batch, err := readBatch(s.l(), next, w.Durable)
			if err != nil {
				return status.Errorf(codes.DataLoss, "%v", err)
			}
			if len(batch) == 0 {
				break
			}
			for _, en := range batch {
				if err := stream.Send(en); err != nil {
					return err
				}
			}
			next = batch[len(batch)-1].Seq + 1
		}
		select {
		case <-stream.Context().Done():
			return nil
		case <-stopping:
			// A follower must not hold up the engine's stop: it
			// reconnects to the next engine.
			return status.Error(codes.Unavailable, "the engine is stopping")
		case <-w.Advanced:
		}
	}
}

// Entries are read for a client in batches of at most batchEntries
// entries and batchBytes bytes (or one entry, when it alone is larger),
// each batch in its own read transaction: a long read transaction would
// hold up bbolt's remap and with it every commit of the tool path.
const (
	batchEntries = 4096
	batchBytes   = 1 << 20
)

var errBatchFull = errors.New("batch full")

// readBatch reads the stored entries from..to, up to a batch, in one
// short read transaction.
func readBatch(l *ledger.Ledger, from, to uint64) ([]*opxv1.LedgerEntry, error) {
	var out []*opxv1.LedgerEntry
	size := 0
	err := l.RangeRaw(from, to, func(seq uint64, raw []byte) error {
		if len(out) > 0 && (len(out) == batchEntries || size+len(raw) > batchBytes) {
			return errBatchFull
		}
		out = append(out, &opxv1.LedgerEntry{Seq: seq, Raw: append([]byte(nil), raw...)})
		size += len(raw)
		return nil
	})
	if err != nil && !errors.Is(err, errBatchFull) {
		return nil, err
	}
	return out, nil
}

// ReadEntries streams the stored entries from_seq..to_seq, never past the
// durable head, many to a message.
func (s *ledgerService) ReadEntries(req *opxv1.ReadEntriesRequest, stream opxv1.LedgerService_ReadEntriesServer) error {
	h, err := engine.DurableHead(s.l())
	if err != nil {
		return status.Errorf(codes.Internal, "%v", err)
	}
	to := min(req.ToSeq, h.Seq)
	for from := req.FromSeq; from <= to; {
		batch, err := readBatch(s.l(), from, to)
		if err != nil {
			return status.Errorf(codes.DataLoss, "%v", err)
		}
		if len(batch) == 0 {
			return nil
		}
		if err := stream.Send(&opxv1.EntryBatch{Entries: batch}); err != nil {
			return err
		}
		from = batch[len(batch)-1].Seq + 1
		if from == 0 {
			return nil // wrapped past the largest seq
		}
	}
	return nil
}

// blobPiece is the most of a blob frame one message carries.
const blobPiece = 1 << 20

// GetBlobFrame streams a blob's stored frame as stored, a piece per
// message, each piece read in its own short transaction. It is not
// checked here: the client checks it, since it trusts no engine's word.
func (s *ledgerService) GetBlobFrame(req *opxv1.GetBlobRequest, stream opxv1.LedgerService_GetBlobFrameServer) error {
	h, err := ledger.ParseHash(req.Hash)
	if err != nil {
		return status.Errorf(codes.InvalidArgument, "%v", err)
	}
	for off := int64(0); ; {
		part, size, err := s.l().BlobFramePart(h, off, blobPiece)
		switch {
		case isNotFound(err):
			return status.Errorf(codes.NotFound, "%v", err)
		case err != nil:
			return status.Errorf(codes.DataLoss, "%v", err)
		}
		msg := &opxv1.BlobFrameChunk{Data: part}
		if off == 0 {
			msg.FrameSize = uint64(size)
		}
		if err := stream.Send(msg); err != nil {
			return err
		}
		off += int64(len(part))
		if off >= size {
			return nil
		}
	}
}

// maxFramesAsked bounds the hashes of one GetBlobFrames request.
const maxFramesAsked = 1024

// GetBlobFrames streams many small stored frames, several to a message
// (about blobPiece bytes), each read in its own short transaction.
func (s *ledgerService) GetBlobFrames(req *opxv1.GetBlobFramesRequest, stream opxv1.LedgerService_GetBlobFramesServer) error {
	if len(req.Hashes) > maxFramesAsked {
		return status.Errorf(codes.InvalidArgument, "%d blobs asked, at most %d", len(req.Hashes), maxFramesAsked)
	}
	msg, size := &opxv1.BlobFrames{}, 0
	for i, hs := range req.Hashes {
		h, err := ledger.ParseHash(hs)
		if err != nil {
			return status.Errorf(codes.InvalidArgument, "%v", err)
		}
		f := &opxv1.BlobFrame{Index: uint32(i)}
		part, full, err := s.l().BlobFramePart(h, 0, blobPiece)
		switch {
		case isNotFound(err):
			f.Missing = true
		case err != nil:
			return status.Errorf(codes.DataLoss, "%v", err)
		case full > int64(len(part)):
			f.Large = true
		default:
			f.Data = part
		}
		if size+len(f.Data) > blobPiece && len(msg.Frames) > 0 {
			if err := stream.Send(msg); err != nil {
				return err
			}
			msg, size = &opxv1.BlobFrames{}, 0
		}
		msg.Frames = append(msg.Frames, f)
		size += len(f.Data)
	}
	if len(msg.Frames) > 0 {
		return stream.Send(msg)
	}
	return nil
}

// AppendNote appends an investigator's note for a client (`opx ledger
// note` while the engine holds the ledger): the author the client names
// (its user), the client's name as other client calls record it. It
// answers once the note is durable.
func (s *ledgerService) AppendNote(ctx context.Context, req *opxv1.AppendNoteRequest) (*opxv1.AppendNoteResponse, error) {
	rec, err := event.Record(req.Session, &event.Note{Author: textclip.Cut(req.Author, 256), Text: req.Text, Client: engine.ClientName(ctx),
		About: req.About})
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "%v", err)
	}
	if h, err := engine.DurableHead(s.l()); err == nil && req.About > h.Seq {
		// The rule strict verification applies (an annotation names an
		// entry before it), refused before anything is appended.
		return nil, status.Errorf(codes.InvalidArgument, "about entry %d: the ledger's head is %d", req.About, h.Seq)
	}
	app, err := s.l().Append(ctx, ledger.Sync, rec)
	if err != nil {
		return nil, status.Errorf(codes.Unavailable, "append note: %v", err)
	}
	return &opxv1.AppendNoteResponse{Seq: app[0].Seq, Hash: app[0].Hash.String()}, nil
}

// Rebuild drops the projections and folds them again from the entries
// (`opx ledger rebuild` while the engine holds the ledger). Appends queue
// meanwhile and commit after it (ledger.RebuildProjections holds the
// commit lock), so no entry is folded twice or missed; readers of a
// projection fold it in memory until the rebuild is through.
func (s *ledgerService) Rebuild(context.Context, *opxv1.RebuildRequest) (*opxv1.RebuildResponse, error) {
	rep, err := s.l().RebuildProjections()
	if err != nil {
		return nil, status.Errorf(codes.Internal, "%v", err)
	}
	b, err := json.Marshal(rep)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "%v", err)
	}
	return &opxv1.RebuildResponse{ReportJson: b}, nil
}

// GetBlob returns a blob, hash-checked.
func (s *ledgerService) GetBlob(_ context.Context, req *opxv1.GetBlobRequest) (*opxv1.GetBlobResponse, error) {
	h, err := ledger.ParseHash(req.Hash)
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "%v", err)
	}
	b, err := s.l().GetBlob(h)
	switch {
	case err == nil:
		return &opxv1.GetBlobResponse{Content: b}, nil
	case isNotFound(err):
		return nil, status.Errorf(codes.NotFound, "%v", err)
	default:
		return nil, status.Errorf(codes.DataLoss, "%v", err)
	}
}

func isNotFound(err error) bool { return err != nil && errors.Is(err, ledger.ErrNotFound) }
