package grpcapi

import (
	"context"
	"errors"
	"sort"
	"strings"

	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/internal/textclip"
	"github.com/opx-dev/opx/ledger"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"github.com/opx-dev/opx/replay/projection"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// clientService serves ClientService to authenticated clients: the
// messages, sessions, history and approvals of the engine e, its status
// and its stop.
type clientService struct {
	opxv1.UnimplementedClientServiceServer
	e *engine.Engine
}

// SendMessage records the message, hands it to the agent and streams the
// session's pipeline events until the agent answered it (or failed).
func (c *clientService) SendMessage(req *opxv1.ClientMessageRequest, stream opxv1.ClientService_SendMessageServer) error {
	return c.e.SendMessage(req, stream)
}

// ListSessions lists sessions, most recently updated first, from the
// sessions projection.
func (c *clientService) ListSessions(_ context.Context, req *opxv1.ListSessionsRequest) (*opxv1.ListSessionsResponse, error) {
	out := &opxv1.ListSessionsResponse{}
	err := c.e.Ledger().ReadProjection(projection.Sessions{}, func(b ledger.Bucket) error {
		for _, s := range projection.ReadSessions(b) {
			if s.Mode == "otr" && !req.IncludeOtr {
				continue
			}
			out.Sessions = append(out.Sessions, &opxv1.SessionInfo{Id: s.ID, Title: s.Title, Mode: s.Mode,
				CreatedAt: engine.UnixNano(s.Created), UpdatedAt: engine.UnixNano(s.Updated), MessageCount: int64(s.Messages)})
		}
		return nil
	})
	if err != nil {
		return nil, status.Errorf(codes.Internal, "sessions: %v", err)
	}
	sort.Slice(out.Sessions, func(i, j int) bool {
		a, b := out.Sessions[i], out.Sessions[j]
		if a.UpdatedAt != b.UpdatedAt {
			return a.UpdatedAt > b.UpdatedAt
		}
		return a.Id < b.Id
	})
	return out, nil
}

// GetHistory returns a session's messages, oldest first, from the history
// projection.
func (c *clientService) GetHistory(ctx context.Context, req *opxv1.GetHistoryRequest) (*opxv1.GetHistoryResponse, error) {
	if _, ok, err := c.e.ReadSession(ctx, req.SessionId); err != nil {
		return nil, status.Errorf(codes.Internal, "sessions: %v", err)
	} else if !ok {
		return nil, status.Errorf(codes.NotFound, "no session %q", textclip.Cut(req.SessionId, 128))
	}
	h, err := c.e.ReadHistory(req.SessionId, int(max(req.Offset, 0)), int(max(req.Limit, 0)))
	if err != nil {
		return nil, status.Errorf(codes.Internal, "history: %v", err)
	}
	return &opxv1.GetHistoryResponse{Messages: h}, nil
}

// ResolveApproval answers an escalation waiting for a human. The answer is
// durable (approval.resolved, by the client's name) when this returns; the
// call then runs, or the agent hears it was denied.
func (c *clientService) ResolveApproval(ctx context.Context, req *opxv1.ApprovalRequest) (*opxv1.ApprovalResponse, error) {
	if strings.TrimSpace(req.ApprovalId) == "" {
		return nil, status.Error(codes.InvalidArgument, "no approval id")
	}
	by := engine.ClientName(ctx)
	if by == "timeout" || by == "engine" {
		// Reserved for the engine's own denials.
		by = "client " + by
	}
	out, err := c.e.Approvals().Resolve(req.ApprovalId, req.Approved, by, textclip.Cut(strings.TrimSpace(req.Reason), 1024))
	switch {
	case errors.Is(err, engine.ErrUnknownApproval):
		return nil, status.Errorf(codes.NotFound, "no pending approval %q (unknown, or already resolved)", textclip.Cut(req.ApprovalId, 128))
	case err != nil:
		c.e.Fatal(err)
		return nil, status.Errorf(codes.Internal, "record the answer: %v", err)
	}
	return &opxv1.ApprovalResponse{Resolved: true, Seq: out.Seq, CallId: out.CallID, Tool: out.Tool, Approved: out.Approved, By: out.By,
		SubagentId: out.SubAgentID}, nil
}

// ListApprovals lists the escalations waiting for a human, oldest first,
// from the approvals projection: every approval.requested of this engine
// without an approval.resolved. (An approval is recorded before its
// waiter is registered, and its waiter is removed before the answer is
// recorded: in those instants the list and ResolveApproval disagree, and
// ResolveApproval says so.)
func (c *clientService) ListApprovals(_ context.Context, req *opxv1.ListApprovalsRequest) (*opxv1.ListApprovalsResponse, error) {
	out := &opxv1.ListApprovalsResponse{}
	err := c.e.Ledger().ReadProjection(projection.Approvals{}, func(b ledger.Bucket) error {
		for _, a := range projection.ReadApprovals(b, req.SessionId, true) {
			if a.RequestedSeq <= c.e.StartedSeq() {
				continue // an engine before this one asked: no one waits for the answer
			}
			var expires int64
			if t := a.Expires(); !t.IsZero() {
				expires = t.UnixNano()
			}
			args, reason := a.Arguments, a.Reason
			if x, r, ok := c.e.OTRApproval(a.Session, a.ID); ok {
				// Off the record: the ledger holds commitments; the
				// human asked sees what the engine judged.
				args, reason = x, r
			}
			out.Approvals = append(out.Approvals, &opxv1.PendingApproval{ApprovalId: a.ID, SessionId: a.Session, SubagentId: a.SubAgentID, MessageId: a.MessageID,
				CallId: a.CallID, Tool: a.Tool, Arguments: args, Reason: reason, RequestedAt: engine.UnixNano(a.RequestedTS),
				TimeoutMs: a.TimeoutMS, ExpiresAt: expires, Seq: a.RequestedSeq})
		}
		return nil
	})
	if err != nil {
		return nil, status.Errorf(codes.Internal, "approvals: %v", err)
	}
	return out, nil
}

// GetStatus reports the processes, the sandbox and the ledger head.
func (c *clientService) GetStatus(context.Context, *opxv1.StatusRequest) (*opxv1.StatusResponse, error) {
	st, err := c.e.Status()
	if err != nil {
		return nil, status.Errorf(codes.Internal, "%v", err)
	}
	return st, nil
}

// Shutdown stops the engine cleanly (exit 0).
func (c *clientService) Shutdown(_ context.Context, req *opxv1.ShutdownRequest) (*opxv1.ShutdownResponse, error) {
	c.e.RequestStop(false, req.Reason)
	return &opxv1.ShutdownResponse{}, nil
}

// Restart stops the engine asking its manager for a restart (exit 75).
func (c *clientService) Restart(_ context.Context, req *opxv1.RestartRequest) (*opxv1.RestartResponse, error) {
	c.e.RequestStop(true, req.Reason)
	return &opxv1.RestartResponse{}, nil
}
