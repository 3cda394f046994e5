package main_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"

	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
)

// TestE2E_MCPProxy_SessionLimit: each proxy session runs its own
// sandboxed upstream, so a client token cannot open them without end: one
// over mcp.max_proxy_sessions is refused with a clear error, and a
// session's end makes room again (review #13).
func TestE2E_MCPProxy_SessionLimit(t *testing.T) {
	t.Parallel()
	w := proxyWorld(t, "  max_proxy_sessions: 1\n")
	w.start()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	pc := w.proxyService()
	open := func(ctx context.Context) (string, error) {
		s := pc.stream(t, ctx)
		if err := s.Send(&opxv1.ProxyRequest{Request: &opxv1.ProxyRequest_Open{Open: &opxv1.ProxyOpen{Server: "fs", ClientName: "limit"}}}); err != nil {
			return "", err
		}
		r, err := s.Recv()
		if err != nil {
			return "", err
		}
		return r.GetOpened().GetSessionId(), nil
	}
	firstCtx, endFirst := context.WithCancel(ctx)
	first, err := open(firstCtx)
	if err != nil || first == "" {
		t.Fatalf("the first session: %q %v", first, err)
	}
	_, err = open(ctx)
	if grpcstatus.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "max_proxy_sessions") {
		t.Fatalf("a session over the limit: %v", err)
	}
	endFirst()
	w.sessionEnded(first)
	// Its end makes room (the session is dropped once its end is
	// recorded; a refusal costs nothing, so ask until it is).
	for {
		id, err := open(ctx)
		if err == nil && id != "" {
			break
		}
		if grpcstatus.Code(err) != codes.ResourceExhausted {
			t.Fatalf("a session after the first ended: %v", err)
		}
	}
}
