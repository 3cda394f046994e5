package engine

import (
	"context"
	"strings"

	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// TokenHeader is the gRPC metadata key that carries the client token.
const TokenHeader = "opx-client-token"

// clientAuth checks the client token on ClientService and LedgerService
// calls. The agent's services authenticate differently: RunSession by the
// agent token in AgentReady, the gateway by the message in flight.
// Reflection stays open so grpcurl can list services; calling any opx
// client method still needs the token.
type clientAuth struct {
	token string
	// rejected, if set, is told about each refused call.
	rejected func(ctx context.Context, method, reason string)
}

func (a *clientAuth) check(ctx context.Context, method string) error {
	if !strings.HasPrefix(method, "/"+opxv1.ClientService_ServiceDesc.ServiceName+"/") &&
		!strings.HasPrefix(method, "/"+opxv1.LedgerService_ServiceDesc.ServiceName+"/") {
		return nil
	}
	md, _ := metadata.FromIncomingContext(ctx)
	given := md.Get(TokenHeader)
	for _, v := range given {
		if tokenEqual(v, a.token) {
			return nil
		}
	}
	reason := "no client token"
	if len(given) > 0 {
		reason = "wrong client token"
	}
	if a.rejected != nil {
		a.rejected(ctx, method, reason)
	}
	return status.Error(codes.Unauthenticated, reason+" (metadata "+TokenHeader+")")
}

func (a *clientAuth) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	if err := a.check(ctx, info.FullMethod); err != nil {
		return nil, err
	}
	return h(ctx, req)
}

func (a *clientAuth) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	if err := a.check(ss.Context(), info.FullMethod); err != nil {
		return err
	}
	return h(srv, ss)
}
