package grpcapi

import (
	"context"
	"errors"

	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/ledger"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Prove returns the inclusion proof of an entry in the tree of the
// latest signed checkpoint (or of the size asked), from the durable
// ledger. When the latest does not cover a durable entry (appended since
// it), the engine signs one that does, rate-bounded (latestCovering). The
// client checks the proof against a signed note itself.
func (s *ledgerService) Prove(ctx context.Context, req *opxv1.ProveRequest) (*opxv1.ProveResponse, error) {
	l := s.l()
	h, err := engine.DurableHead(l)
	if err != nil {
		return nil, status.Errorf(codes.Unavailable, "head: %v", err)
	}
	resp := &opxv1.ProveResponse{TreeSize: req.TreeSize}
	if req.TreeSize == 0 {
		var c ledger.CheckpointPayload
		if c, h, err = s.latestCovering(ctx, l, req.Seq, h); err != nil {
			return nil, err
		}
		resp.TreeSize, resp.Note = c.TreeSize, c.Note
	}
	if req.Seq > h.Seq {
		return nil, status.Errorf(codes.OutOfRange, "entry %d is not in the ledger: its durable head is entry %d", req.Seq, h.Seq)
	}
	if resp.TreeSize > h.Seq+1 || req.Seq >= resp.TreeSize {
		return nil, status.Errorf(codes.OutOfRange, "entry %d is not in a tree of %d entries (durable head %d)", req.Seq, resp.TreeSize, h.Seq)
	}
	e, err := l.Get(req.Seq)
	if err != nil {
		return nil, status.Errorf(codes.Unavailable, "%v", err)
	}
	if resp.Hashes, err = l.InclusionProof(req.Seq, resp.TreeSize); err != nil {
		return nil, treeStatus(err)
	}
	resp.Entry = e.Raw
	return resp, nil
}

// latestCovering returns the latest signed checkpoint and the durable
// head h it was looked for at. When it does not cover entry seq, a
// durable entry, s.fresh records one that does (at most one a second,
// shared by the callers that wait meanwhile); without s.fresh, or once
// the engine stops, the answer says which checkpoint is the latest.
func (s *ledgerService) latestCovering(ctx context.Context, l *ledger.Ledger, seq uint64, h ledger.Head) (ledger.CheckpointPayload, ledger.Head, error) {
	var c ledger.CheckpointPayload
	var ok bool
	find := func() (bool, error) {
		var err error
		if h, err = engine.DurableHead(l); err != nil {
			return false, status.Errorf(codes.Unavailable, "head: %v", err)
		}
		if _, c, ok, err = s.latest.Find(l, h.Seq); err != nil {
			return false, status.Errorf(codes.DataLoss, "%v", err)
		}
		return ok && seq < c.TreeSize, nil
	}
	covered, err := find()
	if err != nil || covered || seq > h.Seq {
		return c, h, err
	}
	if s.fresh != nil {
		covered, err = s.fresh.Cover(ctx, find)
		switch {
		case covered:
			return c, h, nil
		case err == nil:
			// Recorded, and still not covered: the engine signs nothing
			// (no key), so the latest signed one stays behind.
		case errors.Is(err, engine.ErrStopping):
			return c, h, status.Errorf(codes.Unavailable, "no checkpoint covers entry %d: %v", seq, err)
		case ctx.Err() != nil:
			return c, h, status.FromContextError(ctx.Err()).Err()
		case status.Code(err) != codes.Unknown:
			return c, h, err // find's own
		case err != nil:
			return c, h, status.Errorf(codes.Internal, "a checkpoint that covers entry %d: %v", seq, err)
		}
	}
	if !ok {
		return c, h, status.Error(codes.NotFound, "the ledger holds no signed checkpoint yet")
	}
	return c, h, status.Errorf(codes.OutOfRange, "entry %d is not in the latest signed checkpoint, a tree of %d entries; a later checkpoint covers it",
		seq, c.TreeSize)
}

// ConsistencyProof returns the consistency proof between two tree sizes,
// both within the durable ledger.
func (s *ledgerService) ConsistencyProof(_ context.Context, req *opxv1.ConsistencyProofRequest) (*opxv1.ConsistencyProofResponse, error) {
	l := s.l()
	h, err := engine.DurableHead(l)
	if err != nil {
		return nil, status.Errorf(codes.Unavailable, "head: %v", err)
	}
	if req.Size1 > req.Size2 || req.Size2 > h.Seq+1 {
		return nil, status.Errorf(codes.OutOfRange, "no consistency proof from %d to %d entries (durable head %d)", req.Size1, req.Size2, h.Seq)
	}
	hashes, err := l.ConsistencyProof(req.Size1, req.Size2)
	if err != nil {
		return nil, treeStatus(err)
	}
	return &opxv1.ConsistencyProofResponse{Hashes: hashes}, nil
}

// treeStatus maps a tree read's error to a status.
func treeStatus(err error) error {
	if errors.Is(err, ledger.ErrTreeSize) {
		return status.Errorf(codes.OutOfRange, "%v", err)
	}
	return status.Errorf(codes.DataLoss, "%v", err)
}
