package engine

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"strings"
	"time"

	"github.com/opx-dev/opx/internal/textclip"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
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
	// credSubAgent is the token of a live sub-agent, in the same header.
	credSubAgent
	// credAnyAgent is credAgent or credSubAgent (the model gateway, which
	// then serves each only its own messages).
	credAnyAgent
)

func (c credential) String() string {
	switch c {
	case credClient:
		return "client"
	case credAgent:
		return "agent"
	case credSubAgent:
		return "sub-agent"
	case credAnyAgent:
		return "agent or sub-agent"
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
	opxv1.McpProxyService_ServiceDesc.ServiceName:              credClient,
	opxv1.HookService_ServiceDesc.ServiceName:                  credClient,
	reflectionv1.ServerReflection_ServiceDesc.ServiceName:      credClient,
	reflectionv1alpha.ServerReflection_ServiceDesc.ServiceName: credClient,
	opxv1.AgentService_ServiceDesc.ServiceName:                 credAgent,
	opxv1.SubAgentService_ServiceDesc.ServiceName:              credSubAgent,
	opxv1.LLMGateway_ServiceDesc.ServiceName:                   credAnyAgent,
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
	// subagent reports whether a token is a live sub-agent's (nil: none
	// is).
	subagent func(token string) bool
	// rejected, if set, is told about each refused call.
	rejected func(ctx context.Context, method, reason string)
}

func (a *authenticator) check(ctx context.Context, method string) error {
	need := requiredCredential(method)
	var header string
	var ok func(string) bool
	isAgent := func(v string) bool { return tokenEqual(v, a.agent()) }
	isSub := func(v string) bool { return a.subagent != nil && a.subagent(v) }
	switch need {
	case credClient:
		header, ok = opxv1.ClientTokenHeader, func(v string) bool { return tokenEqual(v, a.client) }
	case credAgent:
		header, ok = opxv1.AgentTokenHeader, isAgent
	case credSubAgent:
		header, ok = opxv1.AgentTokenHeader, isSub
	case credAnyAgent:
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

// metadataValue returns the first value of a metadata key.
func metadataValue(ctx context.Context, key string) string {
	md, _ := metadata.FromIncomingContext(ctx)
	if v := md.Get(key); len(v) > 0 {
		return v[0]
	}
	return ""
}

// newToken returns 128 random bits in hex.
func newToken() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

// tokenEqual compares tokens in constant time.
func tokenEqual(a, b string) bool {
	return a != "" && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

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
	if requiredCredential(info.FullMethod) != credClient {
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
