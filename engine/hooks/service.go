package hooks

import (
	"context"
	"errors"
	"io"

	"github.com/opx-dev/opx/agents/hookproto"
	"github.com/opx-dev/opx/internal/textclip"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// service serves HookService to authenticated clients (`opx hook`).
type service struct {
	opxv1.UnimplementedHookServiceServer
	h *sessions
}

// Event answers one hook event.
func (s *service) Event(ctx context.Context, req *opxv1.HookEventRequest) (*opxv1.HookEventReply, error) {
	return s.h.event(ctx, req)
}

// Transcript stores a session's transcript as one blob (hook.transcript),
// its first MaxTranscript bytes when it is larger.
func (s *service) Transcript(stream opxv1.HookService_TranscriptServer) error {
	h := s.h
	select {
	case h.uploads <- struct{}{}:
		defer func() { <-h.uploads }()
	default:
		return status.Error(codes.ResourceExhausted, "transcripts are being stored already; retry")
	}
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	agent, err := hookproto.ParseAgent(first.Agent)
	if err != nil {
		return status.Error(codes.InvalidArgument, err.Error())
	}
	if first.AgentSessionId == "" || len(first.AgentSessionId) > hookproto.MaxIDBytes || first.Path == "" || len(first.Path) > hookproto.MaxPathBytes {
		return status.Error(codes.InvalidArgument, "the first chunk must name the agent's session and the transcript's path")
	}
	id := SessionID(agent, first.AgentSessionId)
	if _, ok, err := h.e.ReadSession(stream.Context(), id); err != nil || !ok {
		return status.Errorf(codes.NotFound, "no session %s of %s is recorded", id, agent)
	}
	data := make([]byte, 0, min(len(first.Data)*2, MaxTranscript))
	truncated := first.Truncated
	add := func(b []byte) {
		if room := MaxTranscript - len(data); len(b) > room {
			b, truncated = b[:room], true
		}
		data = append(data, b...)
	}
	add(first.Data)
	for {
		c, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		add(c.Data)
		truncated = truncated || c.Truncated
	}
	size := max(first.Size, int64(len(data)))
	if !truncated && size != int64(len(data)) {
		// The file changed while the hook read it: what was stored is
		// not the whole of what it announced.
		truncated = true
	}
	hash := ledger.Sum(data)
	seq := h.e.Record(stream.Context(), ledger.Sync, id, &event.HookTranscript{Path: textclip.Cut(first.Path, hookproto.MaxPathBytes),
		Blob: hash.String(), Size: size, Stored: int64(len(data)), Truncated: truncated}, data)
	if seq == 0 {
		return status.Error(codes.Internal, "opx: the ledger failed; nothing more is recorded")
	}
	return stream.SendAndClose(&opxv1.TranscriptStored{SessionId: id, Bytes: int64(len(data)), Seq: seq})
}
