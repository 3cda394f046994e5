package mcpproxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/engine/mcp"
	"github.com/opx-dev/opx/internal/textclip"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"github.com/opx-dev/opx/shield"
)

// JSON-RPC error codes a proxy is answered with.
const (
	codeInvalidParams  = -32602
	codeMethodNotFound = -32601
	codeInternal       = -32603
	// codeServerBusy and codeUpstream are in the range JSON-RPC leaves to
	// servers: too many requests in flight; the upstream gave no answer.
	codeServerBusy = -32000
	codeUpstream   = -32001
)

// proxyForwarded are the methods passed through to the upstream
// (mcp.Conn.Forward); tools/list is answered from the session's tools and
// tools/call goes through the pipeline.
var proxyForwarded = map[string]bool{"resources/list": true, "resources/read": true, "resources/templates/list": true,
	"prompts/list": true, "prompts/get": true, "completion/complete": true, "ping": true}

// serve answers one call of the session, recording it.
func (ps *proxySession) serve(ctx context.Context, c *opxv1.ProxyCall) *opxv1.ProxyResult {
	params := bytes.TrimSpace(c.Params)
	if len(params) == 0 || bytes.Equal(params, []byte("null")) {
		params = []byte("{}")
	}
	method := c.Method
	if len(method) > 128 || method == "" || strings.ContainsFunc(method, func(r rune) bool { return r < 0x21 || r > 0x7e }) {
		method = "(invalid)"
	}
	if method == "tools/call" {
		return ps.callTool(ctx, c.Id, params)
	}
	rctx := context.WithoutCancel(ctx)
	start := time.Now()
	reqID := ps.request(rctx, method, params)
	var (
		result []byte
		code   int32
		msg    string
	)
	switch {
	case !json.Valid(params) || params[0] != '{':
		code, msg = codeInvalidParams, "params must be a JSON object"
	case method == "(invalid)":
		code, msg = codeMethodNotFound, "opx mcp-proxy: the method name is not one"
	case ps.isEnded() != "":
		code, msg = codeUpstream, "opx mcp-proxy: "+ps.isEnded()
	case method == "tools/list":
		result = ps.listTools()
	case proxyForwarded[method]:
		raw, err := ps.conn.Forward(ctx, method, params)
		var werr *jsonrpc.Error
		switch {
		case errors.As(err, &werr):
			// The upstream's own error answer, handed on as is.
			code, msg = codeUpstream, werr.Message
			if werr.Code >= math.MinInt32 && werr.Code <= math.MaxInt32 && werr.Code != 0 {
				code = int32(werr.Code)
			}
		case err != nil:
			code, msg = codeUpstream, fmt.Sprintf("the MCP server %s: %v", ps.upstream, err)
		case len(raw) > proxyMaxResult:
			code, msg = codeInternal, fmt.Sprintf("the MCP server %s answered %d bytes, over the %d opx mcp-proxy hands on", ps.upstream, len(raw), proxyMaxResult)
		default:
			result = raw
			if why := judgeForwarded(ps.upstream, method, raw); why != "" {
				code, msg = codeUpstream, why
			}
		}
	default:
		code, msg = codeMethodNotFound, fmt.Sprintf("opx mcp-proxy does not pass %s on", textclip.Cut(method, 128))
	}
	ps.recordResponse(rctx, reqID, method, result, textclip.Cut(msg, 4096), time.Since(start))
	if code != 0 {
		return &opxv1.ProxyResult{Id: c.Id, ErrorCode: code, Error: textclip.Cut(msg, 4096)}
	}
	return &opxv1.ProxyResult{Id: c.Id, Result: result}
}

// callTool takes one tools/call through the pipeline and answers what the
// client gets: the upstream's CallToolResult as received, or a tool error
// that says why the call did not run.
func (ps *proxySession) callTool(ctx context.Context, id uint64, params []byte) *opxv1.ProxyResult {
	e := ps.e
	rctx := context.WithoutCancel(ctx)
	start := time.Now()
	callID := ps.request(rctx, "tools/call", params)
	ps.mu.Lock()
	ps.calls[id] = callID
	if ps.cancelled[fmt.Sprintf("#%d", id)] {
		delete(ps.cancelled, fmt.Sprintf("#%d", id))
		ps.cancelled[callID] = true
	}
	ps.mu.Unlock()
	defer func() {
		ps.mu.Lock()
		delete(ps.calls, id)
		delete(ps.cancelled, callID)
		ps.mu.Unlock()
	}()
	var p struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	var refusal string
	switch {
	case json.Unmarshal(params, &p) != nil:
		refusal = "tools/call params must be a JSON object with a tool name and arguments"
	case p.Name == "":
		refusal = "tools/call names no tool"
	case ps.isEnded() != "":
		refusal = "opx mcp-proxy: " + ps.isEnded() + "; the call was not made"
	}
	if refusal != "" {
		ps.recordResponse(rctx, callID, "tools/call", nil, refusal, time.Since(start))
		return &opxv1.ProxyResult{Id: id, ErrorCode: codeInvalidParams, Error: refusal}
	}
	args := bytes.TrimSpace(p.Arguments)
	if len(args) == 0 || bytes.Equal(args, []byte("null")) {
		args = []byte("{}")
	}
	out, err := e.Pipeline().Handle(rctx, ps.id, "", "", callID, mcp.ToolName(ps.upstream, p.Name), string(args))
	if err != nil {
		e.Fatal(err)
		return &opxv1.ProxyResult{Id: id, ErrorCode: codeInternal, Error: "opx: the ledger failed; nothing more is recorded"}
	}
	r, ran := ps.take(callID)
	if replay := e.Replaying(); !ran && replay != nil {
		// A rerun: a call served from the record is answered as the
		// record answered it.
		r, ran = proxyAnswer(replay.Recording(), callID, out)
	}
	result := toolCallResult(out, r, ran)
	// A call that ran: Async, as its result is durable already
	// (exec.completed is Sync, the write-ahead rule) and a third fsync
	// per call would be a third of the proxy's cost (BENCHMARKS.md); the
	// answer as the client got it follows in the next group commit,
	// within milliseconds. A call that did not run: Sync, so the verdict
	// that stopped it is durable before the client hears of it.
	dur := ledger.Sync
	if ran {
		dur = ledger.Async
	}
	ps.recordResponseAs(rctx, dur, callID, "tools/call", result, "", time.Since(start))
	return &opxv1.ProxyResult{Id: id, Result: result}
}

// listTools is the tools/list answer: the tools the session holds, each
// as the upstream described it.
func (ps *proxySession) listTools() []byte {
	tools := ps.conn.Tools()
	raws := make([]json.RawMessage, 0, len(tools))
	for _, t := range tools {
		if len(t.Raw) > 0 {
			raws = append(raws, t.Raw)
		}
	}
	b, _ := json.Marshal(map[string]any{"tools": raws})
	return b
}

// toolCallResult is what the client gets for a tools/call: the upstream's
// CallToolResult as received when the call ran and got one (with what opx
// added to the answer, if anything, as text around it); otherwise a tool
// error carrying the pipeline's answer (blocked by Shield and why, denied,
// no answer from the server).
func toolCallResult(out engine.ToolOutcome, r mcp.Result, ran bool) []byte {
	if ran && r.Raw != nil && len(r.Raw) <= proxyMaxResult {
		if out.Content == r.Text {
			return r.Raw
		}
		if before, after, ok := around(out.Content, r.Text); ok {
			if b, err := spliceNotes(r.Raw, strings.TrimSpace(before), strings.TrimSpace(after), out.IsError && !r.IsError); err == nil {
				return b
			}
		}
	}
	b, _ := json.Marshal(map[string]any{"content": []map[string]string{{"type": "text", "text": out.Content}}, "isError": out.IsError})
	return b
}

// around finds text in s as the pipeline places a result among its notes
// (a warning in front ending a line, notes after starting one) and
// returns what is before and after it.
func around(s, text string) (before, after string, ok bool) {
	for i := 0; i <= len(s)-len(text); {
		j := strings.Index(s[i:], text)
		if j < 0 {
			break
		}
		k := i + j
		b, a := s[:k], s[k+len(text):]
		if (b == "" || strings.HasSuffix(b, "\n")) && (a == "" || strings.HasPrefix(a, "\n")) {
			return b, a, true
		}
		i = k + 1
	}
	return "", "", false
}

// spliceNotes adds opx's notes as text content before and after a
// CallToolResult's content, marking it an error if isError.
func spliceNotes(raw json.RawMessage, before, after string, isError bool) ([]byte, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	var content []json.RawMessage
	if c, ok := m["content"]; ok {
		if err := json.Unmarshal(c, &content); err != nil {
			return nil, err
		}
	}
	text := func(s string) json.RawMessage {
		b, _ := json.Marshal(map[string]string{"type": "text", "text": s})
		return b
	}
	if before != "" {
		content = append([]json.RawMessage{text(before)}, content...)
	}
	if after != "" {
		content = append(content, text(after))
	}
	c, err := json.Marshal(content)
	if err != nil {
		return nil, err
	}
	m["content"] = c
	if isError {
		m["isError"] = json.RawMessage("true")
	}
	return json.Marshal(m)
}

// request names a request and records it (mcp.request): tools/call
// requests call_N (the pipeline's call id), the others req_N. Named and
// recorded under one lock, so the record holds them in the order of
// their names (a rerun feeds them in that order and names them again).
func (ps *proxySession) request(ctx context.Context, method string, params []byte) string {
	ps.reqMu.Lock()
	defer ps.reqMu.Unlock()
	var id string
	if method == "tools/call" {
		ps.nCalls++
		id = fmt.Sprintf("call_%d", ps.nCalls)
	} else {
		ps.nReqs++
		id = fmt.Sprintf("req_%d", ps.nReqs)
	}
	ps.recordRequest(ctx, id, method, params)
	return id
}

// recordRequest records mcp.request (Async: the answer's entry is Sync).
func (ps *proxySession) recordRequest(ctx context.Context, reqID, method string, params []byte) {
	inline, blobHash, blob := event.Inline(string(params))
	var blobs [][]byte
	if blob != nil {
		blobs = append(blobs, blob)
	}
	ps.e.Record(ctx, ledger.Async, ps.id, &event.MCPRequest{RequestID: reqID, Method: method, Params: inline, ParamsBlob: blobHash,
		Size: int64(len(params))}, blobs...)
}

// recordResponse records mcp.response, durable before the client hears
// it.
func (ps *proxySession) recordResponse(ctx context.Context, reqID, method string, result []byte, errMsg string, d time.Duration) {
	ps.recordResponseAs(ctx, ledger.Sync, reqID, method, result, errMsg, d)
}

// recordResponseAs records mcp.response with durability dur.
func (ps *proxySession) recordResponseAs(ctx context.Context, dur ledger.Durability, reqID, method string, result []byte, errMsg string, d time.Duration) {
	inline, blobHash, blob := event.Inline(string(result))
	var blobs [][]byte
	if blob != nil {
		blobs = append(blobs, blob)
	}
	ps.e.Record(ctx, dur, ps.id, &event.MCPResponse{RequestID: reqID, Method: method, Result: inline, ResultBlob: blobHash,
		Size: int64(len(result)), Error: errMsg, DurationMS: d.Milliseconds()}, blobs...)
}

// proxyError is an error answer to call id.
func proxyError(id uint64, code int32, msg string) *opxv1.ProxyResponse {
	return &opxv1.ProxyResponse{Response: &opxv1.ProxyResponse_Result{Result: &opxv1.ProxyResult{Id: id, ErrorCode: code, Error: msg}}}
}

// exitDetail says how an upstream ended.
func exitDetail(x event.MCPServerExited) string {
	d := fmt.Sprintf("the MCP server %s ended (%s, exit code %d", x.Server, x.Reason, x.ExitCode)
	if x.Signal != "" {
		d += ", signal " + x.Signal
	}
	d += ")"
	if t := strings.TrimSpace(x.StderrTail); t != "" {
		d += "; its stderr ended with: " + t
	}
	return d
}

// judgeForwarded reads what the upstream answered to a passed-through
// request (resources/read, prompts/get, their listings, ...) as Shield
// reads a tool's result: the client may show any of it to its model
// (review #7). A flagged answer is not handed on: why says so (the
// client's error, recorded in mcp.response beside the answer as
// received, which a rerun hands on as recorded), or is "".
func judgeForwarded(upstream, method string, raw []byte) (why string) {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return ""
	}
	var texts []string
	var walk func(any)
	walk = func(x any) {
		switch x := x.(type) {
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys) // the same reason for the same answer
			for _, k := range keys {
				walk(x[k])
			}
		case []any:
			for _, y := range x {
				walk(y)
			}
		case string:
			texts = append(texts, x)
		}
	}
	walk(v)
	rule, reason := shield.JudgeResult(strings.Join(texts, "\n"))
	if rule == "" {
		return ""
	}
	return fmt.Sprintf("opx mcp-proxy: Shield (%s) flags the answer of the MCP server %s to %s: %s; it is not handed on", rule, upstream, method, reason)
}
