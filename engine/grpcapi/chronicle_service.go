package grpcapi

import (
	"context"
	"encoding/json"

	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/engine/undo"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
)

// chronicleService serves ChronicleService to authenticated clients.
type chronicleService struct {
	opxv1.UnimplementedChronicleServiceServer
	e *engine.Engine
}

// Rollback runs a rollback in the engine. A refused or failed rollback is
// not an RPC error: the report says what happened and why.
func (s *chronicleService) Rollback(ctx context.Context, req *opxv1.RollbackRequest) (*opxv1.RollbackResponse, error) {
	rep, err := s.e.Chronicle().Rollback(ctx, undo.RollbackRequest{Snapshot: req.Snapshot, Session: req.Session, DryRun: req.DryRun, Force: req.Force})
	if err != nil {
		s.e.Logf("engine: rollback: %v", err)
	}
	b, merr := json.Marshal(rep)
	if merr != nil {
		return nil, merr
	}
	return &opxv1.RollbackResponse{ReportJson: b}, nil
}
