package mcpproxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/internal/textclip"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// mcpProxyService serves McpProxyService to authenticated clients: one
// Proxy stream is one mcp-proxy session (proxy.go).
type mcpProxyService struct {
	opxv1.UnimplementedMcpProxyServiceServer
	p *proxySessions
}

// proxyOut sends on a Proxy stream from any goroutine (gRPC streams are
// not safe for concurrent sends).
type proxyOut struct {
	mu     sync.Mutex
	stream opxv1.McpProxyService_ProxyServer
}

func (o *proxyOut) send(r *opxv1.ProxyResponse) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.stream.Send(r)
}

// Proxy serves one MCP client connection: the first request opens the
// session, the rest are its calls and its answers to approvals, until the
// proxy ends the stream or the engine stops. The session ends with the
// stream.
func (s *mcpProxyService) Proxy(stream opxv1.McpProxyService_ProxyServer) error {
	e := s.p.e
	ctx := stream.Context()
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	open := first.GetOpen()
	if open == nil {
		return status.Error(codes.InvalidArgument, "the first request of a Proxy stream must open the session")
	}
	ps, err := s.p.openProxy(ctx, open)
	if err != nil {
		return err
	}
	defer ps.end("the MCP client left", true)
	out := &proxyOut{stream: stream}
	st := ps.conn.Started()
	opened := &opxv1.ProxyOpened{SessionId: ps.id, Upstream: ps.upstream, InitializeResult: ps.conn.InitializeResult(),
		ServerName: st.ServerName, ServerVersion: st.ServerVersion, ProtocolVersion: st.ProtocolVersion}
	if err := out.send(&opxv1.ProxyResponse{Response: &opxv1.ProxyResponse_Opened{Opened: opened}}); err != nil {
		return err
	}
	// The session's approvals go to the proxy (the client's elicitation
	// may answer them, as `opx approve` can); the upstream's exit too.
	sub := e.Subscribe(ps.id)
	defer sub.Close()
	go ps.forwardEvents(sub, out)
	recv := make(chan *opxv1.ProxyRequest)
	recvErr := make(chan error, 1)
	go func() {
		for {
			r, err := stream.Recv()
			if err != nil {
				recvErr <- err
				return
			}
			select {
			case recv <- r:
			case <-ctx.Done():
				return
			}
		}
	}()
	stopping := e.Stopping()
	for {
		select {
		case r := <-recv:
			switch x := r.Request.(type) {
			case *opxv1.ProxyRequest_Call:
				ps.dispatch(ctx, x.Call, out)
			case *opxv1.ProxyRequest_Approval:
				ps.answer(x.Approval)
			case *opxv1.ProxyRequest_Cancel:
				ps.cancel(x.Cancel.Id)
			default:
				return status.Error(codes.InvalidArgument, "a Proxy stream opens its session once")
			}
		case err := <-recvErr:
			if status.Code(err) == codes.Canceled || ctx.Err() != nil {
				return nil
			}
			return nil // the proxy closed its side: the client left
		case <-ps.toolsChanged:
			_ = out.send(&opxv1.ProxyResponse{Response: &opxv1.ProxyResponse_Notice{Notice: &opxv1.ProxyNotice{Kind: "tools_changed",
				Detail: "the MCP server " + ps.upstream + " changed its tools"}}})
		case <-ps.endDone:
			// The upstream exited: the proxy is told why, and the stream
			// ends.
			ps.notifyEnd(out)
			return nil
		case <-stopping:
			// Stop ends the session (its end recorded before
			// engine.stopped); the proxy hears why once it is.
			t := time.NewTimer(proxyEndWait + 5*time.Second)
			select {
			case <-ps.endDone:
				ps.notifyEnd(out)
			case <-t.C:
			}
			t.Stop()
			return status.Error(codes.Unavailable, "the engine stopped")
		case <-ctx.Done():
			return nil
		}
	}
}

// dispatch answers one call in its own goroutine, at most
// proxyMaxInFlight at once; one over is refused at once.
func (ps *proxySession) dispatch(ctx context.Context, c *opxv1.ProxyCall, out *proxyOut) {
	select {
	case ps.slots <- struct{}{}:
	default:
		_ = out.send(proxyError(c.Id, codeServerBusy, "opx mcp-proxy: too many requests in flight in this session; retry when one is answered"))
		return
	}
	ps.inFlight.Add(1)
	go func() {
		defer ps.inFlight.Done()
		defer func() { <-ps.slots }()
		_ = out.send(&opxv1.ProxyResponse{Response: &opxv1.ProxyResponse_Result{Result: ps.serve(ctx, c)}})
		ps.mu.Lock()
		delete(ps.cancelled, fmt.Sprintf("#%d", c.Id)) // a cancel that came before it was named
		ps.mu.Unlock()
	}()
}

// answer resolves one of the session's approvals as its client answered
// (elicitation). Approvals of other sessions are not the client's to
// answer; an approval resolved meanwhile is left as it was.
func (ps *proxySession) answer(a *opxv1.ProxyApprovalAnswer) {
	ps.mu.Lock()
	_, mine := ps.asked[a.ApprovalId]
	ps.mu.Unlock()
	if !mine {
		return
	}
	by := "mcp client " + ps.client
	if _, err := ps.e.Approvals().Resolve(a.ApprovalId, a.Approved, by, textclip.Cut(a.Reason, 1024)); err != nil && !errors.Is(err, engine.ErrUnknownApproval) {
		ps.e.Fatal(err)
	}
}

// cancel ends the wait of a tools/call the client cancelled: its
// pending approval is denied, and one it asks later is denied at once. A
// call that runs already runs to its recorded end.
func (ps *proxySession) cancel(id uint64) {
	ps.mu.Lock()
	callID, ok := ps.calls[id]
	var pending []string
	if ok {
		ps.cancelled[callID] = true
		for apr, c := range ps.asked {
			if c == callID {
				pending = append(pending, apr)
			}
		}
	} else if len(ps.cancelled) < proxyMaxInFlight*4 {
		// Not named yet (its handler has not started): named ids are
		// checked against these by callTool.
		ps.cancelled[fmt.Sprintf("#%d", id)] = true
	}
	ps.mu.Unlock()
	for _, apr := range pending {
		ps.deny(apr)
	}
}

// deny denies one of the session's approvals because its client
// cancelled the call.
func (ps *proxySession) deny(approvalID string) {
	if _, err := ps.e.Approvals().Resolve(approvalID, false, "mcp client "+ps.client, "the MCP client cancelled the call"); err != nil && !errors.Is(err, engine.ErrUnknownApproval) {
		ps.e.Fatal(err)
	}
}

// forwardEvents tells the proxy about the session's approvals as they are
// asked and resolved, until the subscription ends.
func (ps *proxySession) forwardEvents(sub *engine.Subscription, out *proxyOut) {
	for ev := range sub.C {
		if ev.Type != "approval_requested" && ev.Type != "approval_resolved" {
			continue
		}
		var d struct {
			ApprovalID string `json:"approval_id"`
			CallID     string `json:"call_id"`
			SubAgentID string `json:"subagent_id"`
			Tool       string `json:"tool"`
			Arguments  string `json:"arguments"`
			Reason     string `json:"reason"`
			TimeoutMS  int64  `json:"timeout_ms"`
			Approved   bool   `json:"approved"`
			By         string `json:"by"`
		}
		if json.Unmarshal(ev.Data, &d) != nil || d.SubAgentID != "" {
			continue
		}
		a := &opxv1.ProxyApproval{ApprovalId: d.ApprovalID, CallId: d.CallID, Tool: d.Tool, Arguments: d.Arguments, Reason: d.Reason,
			TimeoutMs: d.TimeoutMS, Resolved: ev.Type == "approval_resolved", Approved: d.Approved, By: d.By}
		ps.mu.Lock()
		for id, callID := range ps.calls { // at most proxyMaxInFlight
			if callID == a.CallId {
				a.RequestId = id
				break
			}
		}
		cancelled := false
		if a.Resolved {
			delete(ps.asked, a.ApprovalId)
		} else {
			ps.asked[a.ApprovalId] = a.CallId
			cancelled = ps.cancelled[a.CallId]
		}
		ps.mu.Unlock()
		if cancelled {
			// The client gave up on the call before it asked.
			ps.deny(a.ApprovalId)
			continue
		}
		_ = out.send(&opxv1.ProxyResponse{Response: &opxv1.ProxyResponse_Approval{Approval: a}})
	}
}

// notifyEnd tells the proxy why its session ended (session_ended).
func (ps *proxySession) notifyEnd(out *proxyOut) {
	_ = out.send(&opxv1.ProxyResponse{Response: &opxv1.ProxyResponse_Notice{Notice: &opxv1.ProxyNotice{Kind: "session_ended",
		Detail: textclip.Cut(ps.endDetail(), 4096)}}})
}
