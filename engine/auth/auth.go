package auth

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"strings"

	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	reflectionv1 "google.golang.org/grpc/reflection/grpc_reflection_v1"
	reflectionv1alpha "google.golang.org/grpc/reflection/grpc_reflection_v1alpha"
	"google.golang.org/grpc/status"
)

// Credential is what a caller must present to call a service.
type Credential int

const (
	// Refused opens nothing: the zero value, so a service missing
	// from serviceCredentials is refused to every caller.
	Refused Credential = iota
	// Client is the client token (opxv1.ClientTokenHeader).
	Client
	// Agent is the token of the agent the engine last spawned
	// (opxv1.AgentTokenHeader).
	Agent
	// SubAgent is the token of a live sub-agent, in the same header.
	SubAgent
	// AnyAgent is Agent or SubAgent (the model gateway, which
	// then serves each only its own messages).
	AnyAgent
)

func (c Credential) String() string {
	switch c {
	case Client:
		return "client"
	case Agent:
		return "agent"
	case SubAgent:
		return "sub-agent"
	case AnyAgent:
		return "agent or sub-agent"
	}
	return "refused"
}

// serviceCredentials names the Credential each service on the engine's
// port requires. It is the one place that opens a service: a service
// registered on the server but missing here is refused to every caller
// (fail closed), and TestEngine_EveryRPCAuthenticated checks every method
// the server registers against it.
//
// Server reflection needs the client token too: it serves no data, but
// the API's schema is for the engine's clients only. grpcurl sends its -H
// headers with reflection requests as well, so `grpcurl -H
// 'opx-client-token: ...' ADDR list` works.
var serviceCredentials = map[string]Credential{
	opxv1.ClientService_ServiceDesc.ServiceName:                Client,
	opxv1.LedgerService_ServiceDesc.ServiceName:                Client,
	opxv1.ChronicleService_ServiceDesc.ServiceName:             Client,
	opxv1.McpProxyService_ServiceDesc.ServiceName:              Client,
	opxv1.HookService_ServiceDesc.ServiceName:                  Client,
	reflectionv1.ServerReflection_ServiceDesc.ServiceName:      Client,
	reflectionv1alpha.ServerReflection_ServiceDesc.ServiceName: Client,
	opxv1.AgentService_ServiceDesc.ServiceName:                 Agent,
	opxv1.SubAgentService_ServiceDesc.ServiceName:              SubAgent,
	opxv1.LLMGateway_ServiceDesc.ServiceName:                   AnyAgent,
}

// RequiredCredential returns the Credential a full method name
// ("/pkg.Service/Method") requires.
func RequiredCredential(fullMethod string) Credential {
	service, _, ok := strings.Cut(strings.TrimPrefix(fullMethod, "/"), "/")
	if !ok {
		return Refused
	}
	return serviceCredentials[service]
}

// Authenticator is the engine's one way in: its interceptors run before
// every handler of every service, unary and streaming, and let a call
// through only with the Credential serviceCredentials requires. A refusal
// happens before the handler, so it changes nothing but the record of the
// refusal (Rejected).
type Authenticator struct {
	// Client is the client token.
	Client string
	// Agent returns the token of the agent last spawned ("" before the
	// first, which no token matches).
	Agent func() string
	// SubAgent reports whether a token is a live sub-agent's (nil: none
	// is).
	SubAgent func(token string) bool
	// Rejected, if set, is told about each refused call.
	Rejected func(ctx context.Context, method, reason string)
}

// Check lets a call of method through, or refuses it (Unauthenticated).
func (a *Authenticator) Check(ctx context.Context, method string) error {
	need := RequiredCredential(method)
	var header string
	var ok func(string) bool
	isAgent := func(v string) bool { return TokenEqual(v, a.Agent()) }
	isSub := func(v string) bool { return a.SubAgent != nil && a.SubAgent(v) }
	switch need {
	case Client:
		header, ok = opxv1.ClientTokenHeader, func(v string) bool { return TokenEqual(v, a.Client) }
	case Agent:
		header, ok = opxv1.AgentTokenHeader, isAgent
	case SubAgent:
		header, ok = opxv1.AgentTokenHeader, isSub
	case AnyAgent:
		header, ok = opxv1.AgentTokenHeader, func(v string) bool { return isAgent(v) || isSub(v) }
	default:
		return a.refuse(ctx, method, "method open to no caller", "the engine serves it to no one")
	}
	md, _ := metadata.FromIncomingContext(ctx)
	given := md.Get(header)
	if len(given) > 1 {
		// One token names one caller; the handlers read the first.
		return a.refuse(ctx, method, "more than one "+need.String()+" token", "metadata "+header)
	}
	for _, v := range given {
		if ok(v) {
			return nil
		}
	}
	reason := "no " + need.String() + " token"
	if len(given) > 0 {
		reason = "wrong " + need.String() + " token"
	}
	return a.refuse(ctx, method, reason, "metadata "+header)
}

func (a *Authenticator) refuse(ctx context.Context, method, reason, hint string) error {
	if a.Rejected != nil {
		a.Rejected(ctx, method, reason)
	}
	return status.Error(codes.Unauthenticated, reason+" ("+hint+")")
}

// Unary is the unary interceptor.
func (a *Authenticator) Unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	if err := a.Check(ctx, info.FullMethod); err != nil {
		return nil, err
	}
	return h(ctx, req)
}

// Stream is the streaming interceptor.
func (a *Authenticator) Stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	if err := a.Check(ss.Context(), info.FullMethod); err != nil {
		return err
	}
	return h(srv, ss)
}

// MetadataValue returns the first value of a metadata key.
func MetadataValue(ctx context.Context, key string) string {
	md, _ := metadata.FromIncomingContext(ctx)
	if v := md.Get(key); len(v) > 0 {
		return v[0]
	}
	return ""
}

// NewToken returns 128 random bits in hex.
func NewToken() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

// TokenEqual compares tokens in constant time.
func TokenEqual(a, b string) bool {
	return a != "" && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}
