package auth

import (
	"context"
	"testing"

	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// TestAuthenticator_FailsClosed: a service missing from serviceCredentials
// (SubAgentService is defined in the API but served by no one yet), and a
// malformed method name, are refused to a caller holding both tokens, and
// each refusal is reported for the record.
func TestAuthenticator_FailsClosed(t *testing.T) {
	var refused []string
	a := &Authenticator{Client: "c0ffee", Agent: func() string { return "a9e47" },
		Rejected: func(_ context.Context, method, reason string) { refused = append(refused, method+": "+reason) }}
	ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs(opxv1.ClientTokenHeader, "c0ffee", opxv1.AgentTokenHeader, "a9e47"))
	for _, m := range []string{"/" + opxv1.SubAgentService_ServiceDesc.ServiceName + "/RunSubAgent", "/opx.v1.NewService/Call", "no-slash", ""} {
		if err := a.Check(ctx, m); status.Code(err) != codes.Unauthenticated {
			t.Errorf("%q: %v; want Unauthenticated", m, err)
		}
	}
	if len(refused) != 4 {
		t.Errorf("refusals reported: %q", refused)
	}
	// The same tokens open what the table opens.
	for _, m := range []string{"/opx.v1.ClientService/GetStatus", "/opx.v1.AgentService/RunSession", "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo"} {
		if err := a.Check(ctx, m); err != nil {
			t.Errorf("%q: %v", m, err)
		}
	}
}
