package engine

import (
	"context"
	"strings"

	"go.opentelemetry.io/otel/trace"

	"github.com/opx-dev/opx/engine/judge"
	"github.com/opx-dev/opx/engine/mcp"
	"github.com/opx-dev/opx/telemetry"
)

// mcpTraceContext is Pipeline.TraceContext when telemetry is on: a call of
// an MCP server's tool by the session's own agent carries the W3C trace
// context of its span as telemetry exports it (trace: the turn's, from
// its client.message or the client's traceparent; span: the call's
// execute_tool, from its tool.proposed), sent to the server in
// params._meta.traceparent. Ids are derived from the ledger, so the
// context is right whether the spans go live or are exported later. A
// sub-agent's calls, and a call whose message is no longer in flight,
// carry none.
func (e *Engine) mcpTraceContext(ctx context.Context, prop judge.Proposal, proposedSeq uint64) context.Context {
	if prop.SubAgentID != "" || proposedSeq == 0 || !strings.HasPrefix(prop.Tool, mcp.ToolPrefix) {
		return ctx
	}
	e.mu.Lock()
	f := e.inflight[prop.MessageID]
	var turnSeq uint64
	var tp string
	if f != nil && f.session == prop.Session {
		turnSeq, tp = f.turnSeq, f.traceparent
	}
	e.mu.Unlock()
	if turnSeq == 0 {
		return ctx
	}
	id := e.opts.Ledger.ID()
	tid := telemetry.TraceID(id, prop.Session, turnSeq)
	if parent, ok := telemetry.ParseTraceparent(tp); ok {
		tid = parent.TraceID()
	}
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: telemetry.SpanID(id, prop.Session, proposedSeq),
		TraceFlags: trace.FlagsSampled})
	return mcp.WithTraceparent(ctx, telemetry.Traceparent(sc))
}
