package mcpproxy

import (
	"context"
	"fmt"
	"sync"

	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/engine/executor"
	"github.com/opx-dev/opx/engine/mcp"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/replay/rerun"
)

// Rerun of an mcp-proxy session (engine/redrive): no client and no upstream
// run. The session and its client are recorded again as recorded; then
// the client's requests are fed in their recorded order:
//
//   - A tools/call goes through the live proxy code and the pipeline in
//     replay mode: the call is named again (call_N), Shield re-evaluates
//     it under the recorded policy with the upstream's tools as the
//     record listed them when it was asked, approvals are answered as
//     recorded, and an allowed call is served its recorded snapshot,
//     result and answer (mcp.response) instead of running. The upstream
//     is never called.
//   - Any other request and its answer are recorded again from the
//     record: nothing of opx decided them.
//
// The upstream's life (mcp.server_started, tools_listed, protocol
// errors, exits) is not produced and not compared (rerun.Compare); what
// it decided is. Requests are fed one at a time, so a session whose
// client had several in flight at once diverges where they interleaved.

// Replay re-drives the recorded mcp-proxy session.
func (p *proxySessions) Replay(ctx context.Context) {
	e := p.e
	s := e.Replaying()
	rec := s.Recording()
	rp := rec.Proxy
	if rp.Client == nil {
		s.Fail(fmt.Errorf("%w: mcp-proxy session %s has no mcp.client", rerun.ErrNotReplayable, rec.Session))
		return
	}
	sid := rec.Session
	e.Record(ctx, ledger.Async, sid, &event.SessionCreated{Mode: rec.Mode, Title: rec.Title})
	client := *rp.Client
	e.Record(ctx, ledger.Async, sid, &client)
	ps := &proxySession{e: e, p: p, id: sid, upstream: client.Upstream, client: client.ClientName, slots: make(chan struct{}, proxyMaxInFlight),
		results: map[string]mcp.Result{}, asked: map[string]string{}, calls: map[uint64]string{}, cancelled: map[string]bool{}, endDone: make(chan struct{})}
	listing := &recordedListing{s: s}
	reg, err := executor.NewRegistry()
	if err == nil {
		err = reg.AddDynamic(mcp.ToolPrefix, &mcp.Source{List: listing.tools, Writable: listing.writable})
	}
	if err != nil {
		s.Fail(err)
		return
	}
	ps.reg = reg
	p.mu.Lock()
	p.byID[sid] = ps
	p.mu.Unlock()
	defer p.drop(sid)
	for _, st := range rp.Steps {
		if s.OffRecord() || ctx.Err() != nil {
			return
		}
		listing.set(rp.Listing(st.Seq))
		if st.Request.Method == "tools/call" {
			ps.callTool(ctx, 0, st.Params)
			ps.reqMu.Lock()
			id := fmt.Sprintf("call_%d", ps.nCalls)
			ps.reqMu.Unlock()
			if id != st.Request.RequestID {
				s.OffRecordf("request %s (entry %d): the rerun named it %s", st.Request.RequestID, st.Seq, id)
			}
			continue
		}
		req := st.Request
		e.Record(ctx, ledger.Async, sid, &req, s.Blobs(req.ParamsBlob)...)
		if st.Response == nil {
			s.OffRecordf("request %s (entry %d): the record holds no answer", req.RequestID, st.Seq)
			return
		}
		resp := *st.Response
		e.Record(ctx, ledger.Sync, sid, &resp, s.Blobs(resp.ResultBlob)...)
	}
}

// proxyAnswer is the recorded answer to a proxy session's tools/call
// when the rerun served the call from the record (its outcome is the
// recorded answer: rerun.Recording files it as the call's result).
func proxyAnswer(rec *rerun.Recording, callID string, out engine.ToolOutcome) (mcp.Result, bool) {
	if rec.Proxy == nil {
		return mcp.Result{}, false
	}
	for _, st := range rec.Proxy.Steps {
		if st.Request.RequestID == callID && st.Request.Method == "tools/call" && st.Response != nil && string(st.Result) == out.Content {
			return mcp.Result{Text: out.Content, Raw: st.Result, IsError: out.IsError}, true
		}
	}
	return mcp.Result{}, false
}

// recordedListing is the upstream's tools as the record listed them at
// the request being fed.
type recordedListing struct {
	s  engine.ReplayMode
	mu sync.Mutex
	l  *rerun.MCPListing
}

func (r *recordedListing) set(l *rerun.MCPListing) {
	r.mu.Lock()
	r.l = l
	r.mu.Unlock()
}

// tools are the listed tools, rebuilt from the listing as the live
// engine built them (mcp.ToolsFromListing).
func (r *recordedListing) tools() []mcp.Tool {
	r.mu.Lock()
	l := r.l
	r.mu.Unlock()
	if l == nil {
		return nil
	}
	tools, _, err := mcp.ToolsFromListing(l.Server, r.writable(""), l.Listing)
	if err != nil {
		r.s.OffRecordf("the listing of MCP server %s (entry %d) cannot be read: %v", l.Server, l.Seq, err)
		return nil
	}
	return tools
}

// writable says whether the listed tools were mutating (the upstream ran
// writable).
func (r *recordedListing) writable(string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.l == nil {
		return false
	}
	for _, t := range r.l.Tools {
		if t.Mutating {
			return true
		}
	}
	return false
}
