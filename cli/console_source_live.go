package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/opx-dev/opx/cli/internal/console"
	"github.com/opx-dev/opx/cli/internal/ledgerloc"
	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/engine/registry"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
)

// The console's writes: answers to approvals and annotations, each made
// by the code of the command that makes it from a terminal (opx approve,
// opx deny, opx ledger note), under the client name "opx serve".

// dialLedgerEngine connects, with the client token, to the running engine
// registered for the ledger the console shows (none: console.ErrOffline).
// ctx carries the token and the client name, as dialWorkspace's does.
func (s *consoleSource) dialLedgerEngine(ctx context.Context) (*engineClient, error) {
	abs, err := filepath.Abs(s.about.Path)
	if err != nil {
		return nil, err
	}
	e, tok, err := registry.Lookup(registry.Dir(filepath.Dir(abs)))
	if err != nil || !ledgerloc.SamePath(abs, e.Ledger) {
		return nil, console.ErrOffline
	}
	conn, err := grpc.NewClient(e.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, err
	}
	ctx = metadata.AppendToOutgoingContext(ctx, engine.TokenHeader, tok, "opx-client", "opx "+s.c.Command.Name)
	return &engineClient{entry: e, conn: conn, client: opxv1.NewClientServiceClient(conn),
		ledger: opxv1.NewLedgerServiceClient(conn), ctx: ctx}, nil
}

// Approvals is `opx approve` without an id: what waits.
func (s *consoleSource) Approvals(ctx context.Context) ([]console.Pending, error) {
	ec, err := s.dialLedgerEngine(ctx)
	if err != nil {
		return nil, err
	}
	defer ec.Close()
	ls, err := ec.client.ListApprovals(ec.ctx, &opxv1.ListApprovalsRequest{})
	if err != nil {
		return nil, fmt.Errorf("list approvals: %w", err)
	}
	out := make([]console.Pending, 0, len(ls.Approvals))
	for _, a := range ls.Approvals {
		out = append(out, console.Pending{ID: a.ApprovalId, Session: a.SessionId, SubAgent: a.SubagentId, CallID: a.CallId,
			Tool: a.Tool, Arguments: a.Arguments, Reason: a.Reason, Expires: time.Unix(0, a.ExpiresAt), Seq: a.Seq})
	}
	return out, nil
}

// Resolve is `opx approve ID` / `opx deny ID --reason TEXT`.
func (s *consoleSource) Resolve(ctx context.Context, id string, approve bool, reason string) (*console.Resolved, error) {
	ec, err := s.dialLedgerEngine(ctx)
	if err != nil {
		return nil, err
	}
	defer ec.Close()
	res, err := resolveApproval(ec.ctx, ec.client, id, approve, reason)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", console.ErrNotFound, err)
	}
	return &console.Resolved{Approved: res.Approved, Tool: res.Tool, CallID: res.CallId, By: res.By, Seq: res.Seq}, nil
}

// Annotate is `opx ledger note --session ID --about SEQ TEXT`: appended
// to the file when no engine holds it, else by the engine.
func (s *consoleSource) Annotate(ctx context.Context, session string, about uint64, text string) (uint64, error) {
	rec, err := event.Record(session, &event.Note{Author: author(), Text: text, About: about})
	if err != nil {
		return 0, fmt.Errorf("%w: %w", console.ErrBadRequest, err)
	}
	l, err := ledger.Open(s.about.Path, writeOptions())
	if errors.Is(err, ledger.ErrLocked) {
		ec, err := s.dialLedgerEngine(ctx)
		if err != nil {
			return 0, fmt.Errorf("an engine holds %s, and none registered for it answers: %w", s.about.Path, err)
		}
		defer ec.Close()
		resp, err := ec.ledger.AppendNote(ec.ctx, &opxv1.AppendNoteRequest{Session: session, Author: author(), Text: text, About: about})
		if err != nil {
			return 0, fmt.Errorf("append note to %s: %w", s.about.Path, err)
		}
		return resp.Seq, nil
	}
	if err != nil {
		return 0, ledgerloc.ExplainOpen(s.about.Path, err)
	}
	// Opened for writing, as opx ledger note does: an interrupted
	// rollback is recorded first.
	ws, _ := rollbackWorkspace(s.c, l)
	if err := recoverRollbacks(s.c, l, engine.NewRecorder(l), ws); err != nil {
		l.Close()
		return 0, err
	}
	if h, err := l.Head(); err != nil || about > h.Seq {
		l.Close()
		return 0, fmt.Errorf("%w: entry %d is not recorded", console.ErrBadRequest, about)
	}
	app, err := l.Append(ctx, ledger.Sync, rec)
	if cerr := l.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, fmt.Errorf("append note to %s: %w", s.about.Path, err)
	}
	return app[0].Seq, nil
}

// Follow is `opx ledger follow`'s loop (the engine's stream, else the
// file), each entry checked against the one before it, handed to fn.
func (s *consoleSource) Follow(ctx context.Context, fn func(console.Followed) error) error {
	c := *s.c // the same flags, this request's context
	c.Context = ctx
	f := &follower{c: &c, path: s.about.Path, emit: func(e ledger.Entry) error {
		return fn(console.Followed{Seq: e.Seq, Type: e.Type, Session: e.Session})
	}}
	err := f.run()
	if ctx.Err() != nil && !errors.Is(err, ledger.ErrIntegrity) {
		return nil
	}
	return err
}
