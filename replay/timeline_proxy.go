package replay

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// modeMCPProxy is the mode of an `opx mcp-proxy` session.
const modeMCPProxy = "mcp-proxy"

// proxy folds an entry of an mcp-proxy session into its turns: each
// tools/call the client sent is a turn (Proxied), from its mcp.request to
// its mcp.response, holding the call the pipeline judged and what the
// client got back; the client's other requests stay events. It reports
// whether it took the entry.
func (b *builder) proxy(e ledger.Entry, p event.Payload) bool {
	if b.t.Mode != modeMCPProxy {
		return false
	}
	switch p := p.(type) {
	case *event.MCPClient:
		b.proxyClient = p.ClientName
	case *event.MCPRequest:
		if p.Method != "tools/call" {
			return false
		}
		t := b.newTurn(e, "", p.RequestID, proxyCallText(p), b.proxyClient)
		t.Proxied = true
		return true
	case *event.MCPResponse:
		t := b.turns[turnKey{"", p.RequestID}]
		if p.Method != "tools/call" || t == nil || !t.Proxied || t.Response != nil {
			return false
		}
		t.Response = &Response{Seq: e.Seq, TS: e.TS, Content: proxyResultText(p), Thoughts: []event.Thought{}}
		t.EndSeq, t.EndTS = e.Seq, e.TS
		return true
	}
	return false
}

// proxyCallText is what a client's tools/call asked: the tool and its
// arguments as sent.
func proxyCallText(p *event.MCPRequest) string {
	if p.Params == "" {
		return fmt.Sprintf("tools/call (%d bytes of params, kept as blob %s)", p.Size, p.ParamsBlob)
	}
	var c struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if json.Unmarshal([]byte(p.Params), &c) != nil || c.Name == "" {
		return "tools/call " + p.Params
	}
	args := strings.TrimSpace(string(c.Arguments))
	if args == "" {
		args = "{}"
	}
	return "tools/call " + c.Name + " " + args
}

// proxyResultText is what the client got for a tools/call: the text of
// its result's content (other content as one line each), marked when it
// is a tool error.
func proxyResultText(p *event.MCPResponse) string {
	if p.Error != "" {
		return "error: " + p.Error
	}
	if p.Result == "" {
		return fmt.Sprintf("(%d bytes, kept as blob %s)", p.Size, p.ResultBlob)
	}
	var r struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if json.Unmarshal([]byte(p.Result), &r) != nil {
		return p.Result
	}
	var parts []string
	for _, c := range r.Content {
		if c.Type == "text" {
			parts = append(parts, c.Text)
		} else {
			parts = append(parts, "["+c.Type+"]")
		}
	}
	text := strings.Join(parts, "\n")
	if r.IsError {
		return "tool error: " + text
	}
	return text
}
