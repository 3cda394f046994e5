package cli

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/opx-dev/opx/cli/internal/ui"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
)

// The proxy's side of approvals: a call Shield escalates waits for a
// human, who answers with `opx approve` or `opx deny` in a terminal (or,
// with --elicit-approvals, the client's own prompt). Most MCP clients
// never show the proxy's stderr, so the wait is told to the client too:
//
//   - notifications/message (logger "opx", level warning; notice for an
//     approval granted) when the approval is asked and when it is
//     resolved, sent only at or above the level the client set with
//     logging/setLevel (the SDK's ServerSession.Log: a client that set
//     none gets none);
//   - notifications/progress, when the client's request carried a
//     progress token (its _meta.progressToken), when the approval is
//     asked, every proxyProgressEvery while it waits (a client that
//     resets its request timeout on progress keeps waiting) and when it
//     is resolved, never after the request was answered.
//
// Each says which call waits, for which approval, and the commands that
// answer it. A denied or timed-out call is then answered with a tool
// error that says why (the engine's: "blocked by Shield (tier3:timeout):
// denied: no human answered within 5m0s (apr_3)").

// proxyProgressEvery is how often a call that waits for a human is told
// to the client again (notifications/progress): below the 60 s request
// timeout of the TypeScript SDK's clients.
var proxyProgressEvery = 15 * time.Second

// proxyRequest is a client's tools/call request that waits for its
// answer.
type proxyRequest struct {
	ctx   context.Context // the request's: cancelled when the client cancels it
	token any             // its progress token, or nil

	mu       sync.Mutex // held while a notification about it is sent
	answered bool       // its handler returned: no progress any more
	progress float64    // the last progress sent (it only grows)
}

// approvalWait is an approval one of the session's calls asked for,
// until it is resolved: its notifications are sent in order by one
// goroutine (tell).
type approvalWait struct {
	a        *opxv1.ProxyApproval
	req      *proxyRequest             // the call's request, or nil if it is not known
	resolved chan *opxv1.ProxyApproval // receives the resolution once
}

// progressToken is a request's _meta.progressToken, or nil.
func progressToken(params sdk.Params) any {
	if t, ok := params.(interface{ GetProgressToken() any }); ok {
		return t.GetProgressToken()
	}
	return nil
}

// answeredRequest ends request id's notifications: its answer follows.
func (p *mcpProxy) answeredRequest(id uint64, r *proxyRequest) {
	r.mu.Lock()
	r.answered = true
	r.mu.Unlock()
	p.mu.Lock()
	delete(p.requests, id)
	p.mu.Unlock()
}

// approval shows a call waiting for a human (with the commands that
// answer it) on stderr and to the client, and, where the client supports
// elicitation and --elicit-approvals is set, asks the client's user too;
// the first answer counts. A resolved approval ends the question put to
// the client and is told as the wait was.
func (p *mcpProxy) approval(a *opxv1.ProxyApproval) {
	if a.Resolved {
		p.mu.Lock()
		cancel := p.elicits[a.ApprovalId]
		delete(p.elicits, a.ApprovalId)
		w := p.waits[a.ApprovalId]
		delete(p.waits, a.ApprovalId)
		p.mu.Unlock()
		if cancel != nil {
			cancel()
		}
		if w != nil {
			w.resolved <- a // buffered, sent once
		}
		p.logf("approval %s: %s", a.ApprovalId, approvalVerdict(a))
		return
	}
	approve, deny := p.answerCommands(a.ApprovalId)
	p.logf("Shield asks a human about %s %s: %s\n  approve: %s\n  deny:    %s\n  (denied in %s without an answer)",
		a.Tool, ui.Clip(a.Arguments, 300), a.Reason, approve, deny, time.Duration(a.TimeoutMs)*time.Millisecond)
	p.mu.Lock()
	if len(p.waits) >= proxyMaxWaits {
		// More than the engine has calls in flight: not told again.
		p.mu.Unlock()
		return
	}
	w := &approvalWait{a: a, req: p.requests[a.RequestId], resolved: make(chan *opxv1.ProxyApproval, 1)}
	p.waits[a.ApprovalId] = w
	ss, can := p.session, p.canElict
	var ectx context.Context
	if can && ss != nil {
		var cancel context.CancelFunc
		ectx, cancel = context.WithTimeout(p.ctx, time.Duration(a.TimeoutMs)*time.Millisecond)
		p.elicits[a.ApprovalId] = cancel
		go p.elicit(ectx, cancel, ss, a)
	}
	p.mu.Unlock()
	if ss != nil {
		go p.tell(ss, w)
	}
}

// proxyMaxWaits bounds the approvals the proxy tells the client about at
// once (the engine answers at most 16 requests of a session at a time).
const proxyMaxWaits = 64

// tell tells the client about one approval: that its call waits (log
// and progress), again every proxyProgressEvery (progress), and how it
// was resolved (log and progress), until then or the session's end.
func (p *mcpProxy) tell(ss *sdk.ServerSession, w *approvalWait) {
	a := w.a
	timeout := time.Duration(a.TimeoutMs) * time.Millisecond
	deadline := time.Now().Add(timeout)
	approve, deny := p.answerCommands(a.ApprovalId)
	p.mu.Lock()
	elicit := p.canElict
	p.mu.Unlock()
	also := ""
	if elicit {
		also = ", or answer the client's prompt"
	}
	msg := fmt.Sprintf("opx: the call of %s waits for a human's approval (%s): %s. Approve: %s; deny: %s%s (denied in %s without an answer)",
		a.Tool, a.ApprovalId, ui.Clip(a.Reason, 300), approve, deny, also, timeout)
	p.clientLog(ss, sdk.LoggingLevel("warning"), msg)
	p.progress(ss, w.req, msg)
	tick := time.NewTicker(proxyProgressEvery)
	defer tick.Stop()
	for {
		select {
		case r := <-w.resolved:
			msg := fmt.Sprintf("opx: approval %s of %s: %s", a.ApprovalId, a.Tool, approvalVerdict(r))
			level := sdk.LoggingLevel("warning")
			if r.Approved {
				level = "notice"
			}
			p.clientLog(ss, level, msg)
			p.progress(ss, w.req, msg)
			return
		case <-tick.C:
			left := time.Until(deadline).Round(time.Second)
			if left < 0 {
				left = 0
			}
			p.progress(ss, w.req, fmt.Sprintf("opx: the call of %s still waits for approval %s (%s left): %s or %s",
				a.Tool, a.ApprovalId, left, approve, deny))
		case <-p.ended:
			return
		case <-p.ctx.Done():
			return
		}
	}
}

// clientLog sends the client a notifications/message from the logger
// "opx", if the client asked for messages of that level.
func (p *mcpProxy) clientLog(ss *sdk.ServerSession, level sdk.LoggingLevel, msg string) {
	_ = ss.Log(p.ctx, &sdk.LoggingMessageParams{Logger: "opx", Level: level, Data: msg})
}

// progress sends a notifications/progress for the request, if it
// carried a progress token and is not answered yet.
func (p *mcpProxy) progress(ss *sdk.ServerSession, r *proxyRequest, msg string) {
	if r == nil || r.token == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.answered || r.ctx.Err() != nil {
		return
	}
	r.progress++
	_ = ss.NotifyProgress(r.ctx, &sdk.ProgressNotificationParams{ProgressToken: r.token, Progress: r.progress, Message: msg})
}

// answerCommands are the commands that approve and deny an approval of
// this workspace's engine.
func (p *mcpProxy) answerCommands(id string) (approve, deny string) {
	ws := ""
	if p.target.workspace != "" {
		ws = " --workspace " + shellArg(p.target.workspace)
	}
	return "opx approve " + id + ws, "opx deny " + id + ws
}

// shellArg quotes s for a POSIX shell where it needs it.
func shellArg(s string) string {
	if s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+=:,@%", r))
	}) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// approvalVerdict says how an approval was resolved.
func approvalVerdict(a *opxv1.ProxyApproval) string {
	switch {
	case a.Approved:
		return "approved by " + a.By + "; the call runs"
	case a.By == "timeout":
		return ui.Clip(a.Reason, 300) + ": denied; the call is not made"
	case a.By == "engine":
		return "denied: " + ui.Clip(a.Reason, 300) + "; the call is not made"
	case a.Reason != "":
		return "denied by " + a.By + ": " + ui.Clip(a.Reason, 300) + "; the call is not made"
	default:
		return "denied by " + a.By + "; the call is not made"
	}
}

// elicit asks the client's user about an approval (MCP elicitation) and
// answers it as they did; a dismissed question leaves it to opx approve,
// opx deny or the timeout.
func (p *mcpProxy) elicit(ctx context.Context, cancel context.CancelFunc, ss *sdk.ServerSession, a *opxv1.ProxyApproval) {
	defer cancel()
	schema := map[string]any{"type": "object", "properties": map[string]any{
		"approve": map[string]any{"type": "boolean", "title": "Allow this call", "description": "true runs the call; false denies it"},
		"reason":  map[string]any{"type": "string", "title": "Reason (recorded)"},
	}, "required": []string{"approve"}}
	msg := fmt.Sprintf("opx Shield asks before %s runs: %s\nArguments: %s\n(approval %s; also answerable with opx approve/deny)",
		a.Tool, a.Reason, ui.Clip(a.Arguments, 1000), a.ApprovalId)
	res, err := ss.Elicit(ctx, &sdk.ElicitParams{Message: msg, RequestedSchema: schema})
	if err != nil || res == nil {
		if ctx.Err() == nil && err != nil {
			p.logf("approval %s: the client could not be asked: %v", a.ApprovalId, err)
		}
		return
	}
	var ans *opxv1.ProxyApprovalAnswer
	switch res.Action {
	case "accept":
		approve, _ := res.Content["approve"].(bool)
		reason, _ := res.Content["reason"].(string)
		ans = &opxv1.ProxyApprovalAnswer{ApprovalId: a.ApprovalId, Approved: approve, Reason: reason}
	case "decline":
		ans = &opxv1.ProxyApprovalAnswer{ApprovalId: a.ApprovalId, Approved: false, Reason: "declined in the MCP client"}
	default:
		return // dismissed: someone else may answer
	}
	p.mu.Lock()
	stream := p.stream
	p.mu.Unlock()
	p.sendMu.Lock()
	_ = stream.Send(&opxv1.ProxyRequest{Request: &opxv1.ProxyRequest_Approval{Approval: ans}})
	p.sendMu.Unlock()
}
