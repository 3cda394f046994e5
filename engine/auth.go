package engine

import (
	"context"
	"time"

	"github.com/opx-dev/opx/engine/auth"
	"github.com/opx-dev/opx/internal/textclip"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
)

// TokenHeader is the gRPC metadata key that carries the client token.
const TokenHeader = opxv1.ClientTokenHeader

// recordRejection records a refused call, at most one entry per
// second so a local process hammering the port cannot grow the ledger
// without bound; the next entry counts the refusals in between.
func (e *Engine) recordRejection(ctx context.Context, method, reason string) {
	e.mu.Lock()
	now := time.Now()
	if now.Sub(e.rejectedAt) < time.Second {
		e.rejectedSuppressed++
		e.mu.Unlock()
		return
	}
	suppressed := e.rejectedSuppressed
	e.rejectedAt, e.rejectedSuppressed = now, 0
	e.mu.Unlock()
	who := "unknown"
	if p, ok := peer.FromContext(ctx); ok {
		who = p.Addr.String()
	}
	e.record(ctx, ledger.Async, "", &event.ClientRejected{Method: textclip.Cut(method, 256), Reason: reason, Peer: who, Suppressed: suppressed})
}

// What a client may be told: only entries that are durable. Three paths
// reach clients, each held to it here or beside it:
//   - streamed pipeline events go through the Broadcaster, which releases
//     an event once the durable watermark passes every entry appended
//     before it;
//   - unary answers (sessions, history, approvals, status, rollback
//     reports) leave only after the ledger synced what was appended
//     before the handler returned (durableAnswer);
//   - the ledger service's head, ReadEntries, StreamEntries and Follow
//     stop at the durable head (durableHead, ledger.Watermark).

// durableAnswer holds a client's unary answer until every entry appended
// before its handler returned is durable, whatever the handler read or
// recorded. With nothing queued it costs a lock; otherwise it waits for
// (and hurries) the group commit.
func (e *Engine) durableAnswer(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	resp, err := h(ctx, req)
	if auth.RequiredCredential(info.FullMethod) != auth.Client {
		return resp, err
	}
	if serr := e.opts.Ledger.Sync(ctx); serr != nil {
		if ctx.Err() != nil {
			return nil, status.FromContextError(ctx.Err()).Err()
		}
		return nil, status.Errorf(codes.Unavailable, "the ledger did not commit the answer's entries: %v", serr)
	}
	return resp, err
}

// durableHead is the head a client may be told of: the committed head,
// but never past the writer's durable watermark (a commit's head is
// readable a moment before its fsync returns).
func durableHead(l *ledger.Ledger) (ledger.Head, error) {
	h, err := l.Head()
	if err != nil {
		return h, err
	}
	w, err := l.Watermark()
	if err != nil || w.Durable >= h.Seq {
		return h, err
	}
	en, err := l.Get(w.Durable)
	if err != nil {
		return h, err
	}
	h.Seq, h.Hash = en.Seq, en.Hash()
	return h, nil
}
