package engine

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// ledgerService lets clients read the ledger while the engine holds the
// file: it only ever reads.
type ledgerService struct {
	opxv1.UnimplementedLedgerServiceServer
	e *Engine
}

func (s *ledgerService) l() *ledger.Ledger { return s.e.opts.Ledger }

// Head returns the durable head.
func (s *ledgerService) Head(context.Context, *opxv1.HeadRequest) (*opxv1.HeadResponse, error) {
	h, err := durableHead(s.l())
	if err != nil {
		return nil, status.Errorf(codes.Internal, "%v", err)
	}
	return &opxv1.HeadResponse{LedgerId: h.LedgerID, Seq: h.Seq, Hash: h.Hash.String(), Format: ledger.Format}, nil
}

// Verify verifies the ledger as `opx ledger verify` does.
func (s *ledgerService) Verify(_ context.Context, req *opxv1.VerifyRequest) (*opxv1.VerifyResponse, error) {
	opts := ledger.VerifyOptions{}
	if req.Strict {
		opts = event.StrictOptions()
		// A rollback this engine is carrying out has its plan on record
		// and its outcome still to come: it is not an interrupted one.
		end := opts.CheckEnd
		opts.CheckEnd = func() []*ledger.IntegrityError {
			var out []*ledger.IntegrityError
			for _, f := range end() {
				if !s.e.chron.OwnPlan(f.Seq) {
					out = append(out, f)
				}
			}
			return out
		}
	}
	rep, err := s.l().Verify(opts)
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
	h, err := durableHead(s.l())
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
	return s.l().Range(req.FromSeq, to, func(en ledger.Entry) error {
		if req.Session != "" && en.Session != req.Session {
			return nil
		}
		return stream.Send(&opxv1.LedgerEntry{Seq: en.Seq, Raw: en.Raw})
	})
}

// Follow streams entries from a seq on, then new ones as they become
// durable (the writer's watermark), until the client leaves.
func (s *ledgerService) Follow(req *opxv1.FollowRequest, stream opxv1.LedgerService_FollowServer) error {
	next := req.FromSeq
	for {
		w, err := s.l().Watermark()
		if err != nil {
			return status.Errorf(codes.Unavailable, "%v", err)
		}
		if next <= w.Durable {
			err := s.l().Range(next, w.Durable, func(en ledger.Entry) error {
				next = en.Seq + 1
				return stream.Send(&opxv1.LedgerEntry{Seq: en.Seq, Raw: en.Raw})
			})
			if err != nil {
				return err
			}
		}
		select {
		case <-stream.Context().Done():
			return nil
		case <-w.Advanced:
		}
	}
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

// metadataValue returns the first value of a metadata key.
func metadataValue(ctx context.Context, key string) string {
	md, _ := metadata.FromIncomingContext(ctx)
	if v := md.Get(key); len(v) > 0 {
		return v[0]
	}
	return ""
}
