package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/opx-dev/opx/engine/mcp"
	"github.com/opx-dev/opx/internal/mcptest"
)

// TestConn_Everything runs the real @modelcontextprotocol/server-everything
// sandboxed: its kinds of content render for a model and stay whole in
// Raw, it sees none of the engine's environment, and resources, prompts
// and completion pass through as received.
func TestConn_Everything(t *testing.T) {
	prog := mcptest.Program(t, mcptest.Everything)
	t.Setenv("OPX_TEST_SECRET", "engine-only")
	e := newEnv(t)
	c := e.start(t, mcp.Spec{Name: "every", Argv: []string{prog}})
	ctx := context.Background()
	var names []string
	for _, tl := range c.Tools() {
		names = append(names, tl.Tool)
	}
	for _, want := range []string{"echo", "get-env", "get-tiny-image", "get-sum", "get-structured-content"} {
		if !slices.Contains(names, want) {
			t.Fatalf("tools %v lack %s", names, want)
		}
	}

	call := func(tool, args string) mcp.Result {
		t.Helper()
		r, err := c.CallTool(ctx, "call-"+tool, tool, json.RawMessage(args))
		if err != nil || r.IsError {
			t.Fatalf("%s: %+v %v", tool, r, err)
		}
		return r
	}
	if r := call("echo", `{"message":"hi there"}`); !strings.Contains(r.Text, "hi there") {
		t.Errorf("echo: %q", r.Text)
	}
	if r := call("get-sum", `{"a":2,"b":40}`); !strings.Contains(r.Text, "42") {
		t.Errorf("get-sum: %q", r.Text)
	}
	r := call("get-tiny-image", `{}`)
	if !strings.Contains(r.Text, "[image image/png, ") {
		t.Errorf("get-tiny-image: %q", r.Text)
	}
	var raw struct {
		Content []struct {
			Type string `json:"type"`
			Data string `json:"data"`
		} `json:"content"`
	}
	if err := json.Unmarshal(r.Raw, &raw); err != nil || !slices.ContainsFunc(raw.Content, func(c struct {
		Type string `json:"type"`
		Data string `json:"data"`
	}) bool {
		return c.Type == "image" && len(c.Data) > 100
	}) {
		t.Errorf("the image is not whole in Raw: %v", err)
	}
	if r := call("get-structured-content", `{"location":"New York"}`); r.Text == "" || !json.Valid(r.Raw) {
		t.Errorf("get-structured-content: %+v", r)
	}
	// The server's environment is its own: no secret of the engine's.
	envText := call("get-env", `{}`).Text
	if strings.Contains(envText, "OPX_TEST_SECRET") || strings.Contains(envText, "engine-only") || !strings.Contains(envText, e.sb.HomeRoot) {
		t.Errorf("the server's environment: %.2000s", envText)
	}

	forward := func(method, params string) json.RawMessage {
		t.Helper()
		raw, err := c.Forward(ctx, method, json.RawMessage(params))
		if err != nil || !json.Valid(raw) {
			t.Fatalf("%s: %s %v", method, raw, err)
		}
		return raw
	}
	var resources struct {
		Resources []struct {
			URI string `json:"uri"`
		} `json:"resources"`
	}
	if err := json.Unmarshal(forward("resources/list", `{}`), &resources); err != nil || len(resources.Resources) == 0 {
		t.Fatalf("resources: %+v %v", resources, err)
	}
	uri, _ := json.Marshal(resources.Resources[0].URI)
	if got := forward("resources/read", `{"uri":`+string(uri)+`}`); !strings.Contains(string(got), `"contents"`) {
		t.Errorf("resources/read: %.300s", got)
	}
	forward("resources/templates/list", `{}`)
	if got := forward("prompts/list", ``); !strings.Contains(string(got), "args-prompt") {
		t.Errorf("prompts/list: %.300s", got)
	}
	if got := forward("prompts/get", `{"name":"args-prompt","arguments":{"city":"Lisbon"}}`); !strings.Contains(string(got), "Lisbon") {
		t.Errorf("prompts/get: %.300s", got)
	}
	forward("completion/complete", `{"ref":{"type":"ref/prompt","name":"completable-prompt"},"argument":{"name":"department","value":"E"}}`)
	forward("ping", ``)
	// An error answer is handed on as the server gave it.
	_, err := c.Forward(ctx, "prompts/get", json.RawMessage(`{"name":"no-such-prompt"}`))
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Message == "" {
		t.Errorf("error answer: %v", err)
	}
	if _, err := c.Forward(ctx, "resources/subscribe", json.RawMessage(`{"uri":"x"}`)); !errors.Is(err, mcp.ErrMethodRefused) {
		t.Errorf("resources/subscribe: %v", err)
	}
	if _, err := c.Forward(ctx, "prompts/list", json.RawMessage(`"x"`)); err == nil {
		t.Errorf("params that are not an object were passed on")
	}
}
