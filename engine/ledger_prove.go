package engine

import (
	"context"
	"errors"

	"github.com/opx-dev/opx/ledger"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Prove returns the inclusion proof of an entry in the tree of the
// latest signed checkpoint (or of the size asked), from the durable
// ledger. The client checks it against a signed note itself.
func (s *ledgerService) Prove(_ context.Context, req *opxv1.ProveRequest) (*opxv1.ProveResponse, error) {
	l := s.l()
	h, err := durableHead(l)
	if err != nil {
		return nil, status.Errorf(codes.Unavailable, "head: %v", err)
	}
	resp := &opxv1.ProveResponse{TreeSize: req.TreeSize}
	if req.TreeSize == 0 {
		_, c, ok, err := s.latest.Find(l, h.Seq)
		switch {
		case err != nil:
			return nil, status.Errorf(codes.DataLoss, "%v", err)
		case !ok:
			return nil, status.Error(codes.NotFound, "the ledger holds no signed checkpoint yet")
		}
		resp.TreeSize, resp.Note = c.TreeSize, c.Note
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

// ConsistencyProof returns the consistency proof between two tree sizes,
// both within the durable ledger.
func (s *ledgerService) ConsistencyProof(_ context.Context, req *opxv1.ConsistencyProofRequest) (*opxv1.ConsistencyProofResponse, error) {
	l := s.l()
	h, err := durableHead(l)
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
