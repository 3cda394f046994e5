package engine_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/engine/judge"
	"github.com/opx-dev/opx/engine/undo"
	"github.com/opx-dev/opx/ledger/event"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"github.com/opx-dev/opx/shield"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"
)

// waitFor re-reads the ledger's entry types until one is typ.
func (r *running) waitFor(t testing.TB, typ string) {
	t.Helper()
	for !slices.Contains(r.types(t), typ) {
		r.l.Sync(context.Background())
	}
}

// call calls a method generically, with an empty message, however it
// streams, and returns the call's status.
func call(ctx context.Context, conn *grpc.ClientConn, method string, m grpc.MethodInfo) error {
	if !m.IsClientStream && !m.IsServerStream {
		return conn.Invoke(ctx, method, &emptypb.Empty{}, &emptypb.Empty{})
	}
	s, err := conn.NewStream(ctx, &grpc.StreamDesc{StreamName: m.Name, ClientStreams: m.IsClientStream, ServerStreams: m.IsServerStream}, method)
	if err != nil {
		return err
	}
	if err := s.SendMsg(&emptypb.Empty{}); err != nil {
		return s.RecvMsg(&emptypb.Empty{}) // the status that ended the stream
	}
	s.CloseSend()
	return s.RecvMsg(&emptypb.Empty{})
}

// TestEngine_EveryRPCAuthenticated enumerates every method the engine's
// gRPC server registers (so a service added later is covered too) and
// calls each over loopback without a token, with wrong tokens, and with
// the other kind of caller's token (the agent's token for a client
// method, the client token for the agent's): every call is refused as
// Unauthenticated before its handler, the engine keeps running, and the
// ledger gains only client.rejected entries.
func TestEngine_EveryRPCAuthenticated(t *testing.T) {
	r := startEngine(t)
	agentTok := <-r.tokens // the agent is spawned; no agent connects
	r.waitFor(t, event.TypeAgentSpawned)
	before := len(r.types(t))

	infos := r.e.ServiceInfo()
	var methods int
	for svc, info := range infos {
		for _, m := range info.Methods {
			methods++
			method := "/" + svc + "/" + m.Name
			cred := engine.RequiredCredential(method)
			var own, other, otherTok string
			switch cred {
			case "client":
				own, other, otherTok = opxv1.ClientTokenHeader, opxv1.AgentTokenHeader, agentTok
			case "agent", "agent or sub-agent":
				own, other, otherTok = opxv1.AgentTokenHeader, opxv1.ClientTokenHeader, clientToken
			case "sub-agent":
				// The main agent's token opens no sub-agent stream.
				own, other, otherTok = opxv1.AgentTokenHeader, opxv1.ClientTokenHeader, clientToken
				err := call(metadata.AppendToOutgoingContext(context.Background(), own, agentTok), r.conn, method, m)
				if status.Code(err) != codes.Unauthenticated {
					t.Errorf("%s with the agent's token: %v; want Unauthenticated", method, err)
				}
			default:
				t.Errorf("%s is registered but open to no caller: name its credential in serviceCredentials (engine/auth)", method)
				continue
			}
			bg := context.Background()
			for name, ctx := range map[string]context.Context{
				"no token":                 bg,
				"empty token":              metadata.AppendToOutgoingContext(bg, own, ""),
				"wrong tokens":             metadata.AppendToOutgoingContext(bg, own, strings.Repeat("0", 32), other, strings.Repeat("0", 32)),
				"the other caller's token": metadata.AppendToOutgoingContext(bg, other, otherTok),
				"the other token here":     metadata.AppendToOutgoingContext(bg, own, otherTok),
			} {
				err := call(ctx, r.conn, method, m)
				if status.Code(err) != codes.Unauthenticated || !strings.Contains(status.Convert(err).Message(), cred+" token") {
					t.Errorf("%s with %s (%s credential): %v; want Unauthenticated before the handler", method, name, cred, err)
				}
			}
		}
	}
	// Every service opx registers, and reflection, are on the port.
	for _, svc := range []string{"opx.v1.ClientService", "opx.v1.LedgerService", "opx.v1.ChronicleService", "opx.v1.AgentService",
		"opx.v1.SubAgentService", "opx.v1.LLMGateway", "grpc.reflection.v1.ServerReflection"} {
		if _, ok := infos[svc]; !ok {
			t.Errorf("service %s not registered (registered: %v)", svc, infos)
		}
	}
	if methods < 15 {
		t.Errorf("only %d methods enumerated", methods)
	}

	// Nothing happened: the engine answers (Shutdown and Restart did not
	// run), and the refusals are all the ledger gained.
	if _, err := opxv1.NewClientServiceClient(r.conn).GetStatus(r.ctx, &opxv1.StatusRequest{}); err != nil {
		t.Fatalf("GetStatus with the token after the refusals: %v", err)
	}
	types := r.types(t)
	for _, typ := range types[before:] {
		if typ != event.TypeClientRejected {
			t.Errorf("refused calls recorded %s; want only client.rejected (new entries: %v)", typ, types[before:])
		}
	}
	if len(types) == before {
		t.Error("no client.rejected recorded")
	}
}

// TestEngine_RollbackNeedsClientToken is the reported bypass: a forced
// session rollback through the running engine without the client token
// deleted the file the session had created, and a dry run listed paths
// and hashes. Both are refused now, and the file stays.
func TestEngine_RollbackNeedsClientToken(t *testing.T) {
	policy, err := shield.ParsePolicy([]byte(allowAll))
	if err != nil {
		t.Fatal(err)
	}
	var ws string
	r := startEngine(t, func(o *engine.Options) {
		ws = o.Workspace
		o.Evaluator = judge.ShieldEvaluator{S: shield.New(shield.Config{Workspace: o.Workspace, Home: "/home/nobody", Policy: policy, RateLimit: 10000})}
	})
	agent := r.connectAgent(t, <-r.tokens)
	c := opxv1.NewClientServiceClient(r.conn)
	s, err := c.SendMessage(r.ctx, &opxv1.ClientMessageRequest{Content: "make a file"})
	if err != nil {
		t.Fatal(err)
	}
	d, err := agent.Recv()
	if err != nil {
		t.Fatal(err)
	}
	pr := d.GetProcessRequest()
	agent.Send(&opxv1.AgentEvent{Event: &opxv1.AgentEvent_ToolCall{ToolCall: &opxv1.ToolCallProposed{MessageId: pr.MessageId, CallId: "c1",
		ToolName: "write_file", ArgumentsJson: `{"path":"made.txt","content":"made by the session\n"}`}}})
	if res, err := agent.Recv(); err != nil || res.GetToolResult().GetIsError() {
		t.Fatalf("write_file: %v %v", res, err)
	}
	agent.Send(&opxv1.AgentEvent{Event: &opxv1.AgentEvent_ResponseComplete{ResponseComplete: &opxv1.AgentResponseComplete{MessageId: pr.MessageId, Content: "done"}}})
	for {
		ev, err := s.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == "response_complete" {
			break
		}
	}
	made := filepath.Join(ws, "made.txt")
	if _, err := os.Stat(made); err != nil {
		t.Fatal(err)
	}

	cs := opxv1.NewChronicleServiceClient(r.conn)
	for _, req := range []*opxv1.RollbackRequest{{Session: pr.SessionId, Force: true}, {Session: pr.SessionId, DryRun: true}} {
		for name, ctx := range map[string]context.Context{
			"no token":    context.Background(),
			"agent token": r.agentCtx,
		} {
			if rep, err := cs.Rollback(ctx, req); status.Code(err) != codes.Unauthenticated || rep != nil {
				t.Errorf("rollback %v with %s: %v %v; want Unauthenticated", req, name, rep, err)
			}
		}
	}
	if _, err := os.Stat(made); err != nil {
		t.Fatalf("after refused rollbacks: %v", err)
	}
	// With the token, the dry run shows the path: the refusal was not for
	// want of something to roll back.
	rep, err := cs.Rollback(r.ctx, &opxv1.RollbackRequest{Session: pr.SessionId, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	var plan undo.RollbackReport
	if err := json.Unmarshal(rep.ReportJson, &plan); err != nil || len(plan.Steps) != 1 || plan.Steps[0].Path != "made.txt" {
		t.Errorf("dry run with the token: %s %v; want made.txt in the plan", rep.ReportJson, err)
	}
}

// TestEngine_OversizedCallsRefused: gRPC bounds what any caller sends
// before the authenticator or a handler runs: a message over 4 MiB and
// metadata over 16 KiB are refused, and the engine serves on.
func TestEngine_OversizedCallsRefused(t *testing.T) {
	r := startEngine(t)
	c := opxv1.NewClientServiceClient(r.conn)
	big := strings.Repeat("x", 5<<20)
	if _, err := c.ResolveApproval(r.ctx, &opxv1.ApprovalRequest{ApprovalId: big}); status.Code(err) != codes.ResourceExhausted {
		t.Errorf("a 5 MiB message: %v; want ResourceExhausted", err)
	}
	ctx := metadata.AppendToOutgoingContext(r.ctx, "opx-client", strings.Repeat("y", 32<<10))
	if _, err := c.GetStatus(ctx, &opxv1.StatusRequest{}); err == nil {
		t.Error("32 KiB of metadata accepted")
	}
	if _, err := c.GetStatus(r.ctx, &opxv1.StatusRequest{}); err != nil {
		t.Errorf("GetStatus after the refusals: %v", err)
	}
}
