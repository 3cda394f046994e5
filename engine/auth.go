package engine

import (
	"context"
	"strings"

	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	reflectionv1 "google.golang.org/grpc/reflection/grpc_reflection_v1"
	reflectionv1alpha "google.golang.org/grpc/reflection/grpc_reflection_v1alpha"
	"google.golang.org/grpc/status"
)

// TokenHeader is the gRPC metadata key that carries the client token.
const TokenHeader = opxv1.ClientTokenHeader

// credential is what a caller must present to call a service.
type credential int

const (
	// credRefused opens nothing: the zero value, so a service missing
	// from serviceCredentials is refused to every caller.
	credRefused credential = iota
	// credClient is the client token (TokenHeader).
	credClient
	// credAgent is the token of the agent the engine last spawned
	// (opxv1.AgentTokenHeader).
	credAgent
)

func (c credential) String() string {
	switch c {
	case credClient:
		return "client"
	case credAgent:
		return "agent"
	}
	return "refused"
}

// serviceCredentials names the credential each service on the engine's
// port requires. It is the one place that opens a service: a service
// registered on the server but missing here is refused to every caller
// (fail closed), and TestEngine_EveryRPCAuthenticated checks every method
// the server registers against it.
//
// Server reflection needs the client token too: it serves no data, but
// the API's schema is for the engine's clients only. grpcurl sends its -H
// headers with reflection requests as well, so `grpcurl -H
// 'opx-client-token: ...' ADDR list` works.
var serviceCredentials = map[string]credential{
	opxv1.ClientService_ServiceDesc.ServiceName:                credClient,
	opxv1.LedgerService_ServiceDesc.ServiceName:                credClient,
	opxv1.ChronicleService_ServiceDesc.ServiceName:             credClient,
	reflectionv1.ServerReflection_ServiceDesc.ServiceName:      credClient,
	reflectionv1alpha.ServerReflection_ServiceDesc.ServiceName: credClient,
	opxv1.AgentService_ServiceDesc.ServiceName:                 credAgent,
	opxv1.LLMGateway_ServiceDesc.ServiceName:                   credAgent,
}

// requiredCredential returns the credential a full method name
// ("/pkg.Service/Method") requires.
func requiredCredential(fullMethod string) credential {
	service, _, ok := strings.Cut(strings.TrimPrefix(fullMethod, "/"), "/")
	if !ok {
		return credRefused
	}
	return serviceCredentials[service]
}

// authenticator is the engine's one way in: its interceptors run before
// every handler of every service, unary and streaming, and let a call
// through only with the credential serviceCredentials requires. A refusal
// happens before the handler, so it changes nothing but the record of the
// refusal (rejected).
type authenticator struct {
	client string
	// agent returns the token of the agent last spawned ("" before the
	// first, which no token matches).
	agent func() string
	// rejected, if set, is told about each refused call.
	rejected func(ctx context.Context, method, reason string)
}

func (a *authenticator) check(ctx context.Context, method string) error {
	need := requiredCredential(method)
	var header, want string
	switch need {
	case credClient:
		header, want = opxv1.ClientTokenHeader, a.client
	case credAgent:
		header, want = opxv1.AgentTokenHeader, a.agent()
	default:
		return a.refuse(ctx, method, "method open to no caller", "the engine serves it to no one")
	}
	md, _ := metadata.FromIncomingContext(ctx)
	given := md.Get(header)
	for _, v := range given {
		if tokenEqual(v, want) {
			return nil
		}
	}
	reason := "no " + need.String() + " token"
	if len(given) > 0 {
		reason = "wrong " + need.String() + " token"
	}
	return a.refuse(ctx, method, reason, "metadata "+header)
}

func (a *authenticator) refuse(ctx context.Context, method, reason, hint string) error {
	if a.rejected != nil {
		a.rejected(ctx, method, reason)
	}
	return status.Error(codes.Unauthenticated, reason+" ("+hint+")")
}

func (a *authenticator) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	if err := a.check(ctx, info.FullMethod); err != nil {
		return nil, err
	}
	return h(ctx, req)
}

func (a *authenticator) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	if err := a.check(ss.Context(), info.FullMethod); err != nil {
		return err
	}
	return h(srv, ss)
}
