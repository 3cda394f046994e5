package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/opx-dev/opx/engine/mcp"
	"github.com/opx-dev/opx/internal/mcptest"
	"github.com/opx-dev/opx/ledger/event"
)

// TestConn_Filesystem runs the real @modelcontextprotocol/server-filesystem
// in the sandbox, read-only: its tools are listed and recorded, a read
// works, a write inside the workspace is refused by the kernel, and
// Close records nothing itself but says "stopped".
func TestConn_Filesystem(t *testing.T) {
	fs := mcptest.Program(t, mcptest.Filesystem)
	e := newEnv(t)
	if err := os.WriteFile(filepath.Join(e.ws, "a.txt"), []byte("hello from the workspace\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := e.start(t, mcp.Spec{Name: "fs", Argv: []string{fs, e.ws}})

	st := c.Started()
	if st.Server != "fs" || st.Instance != 1 || st.PID <= 0 || st.ServerName != "secure-filesystem-server" || st.ProtocolVersion == "" {
		t.Errorf("started: %+v", st)
	}
	if st.Sandbox.Writable || st.Sandbox.Network || !slices.ContainsFunc(st.Sandbox.ReadOnly, func(d string) bool { return strings.HasSuffix(d, "/.ci/mcp/node_modules") }) {
		t.Errorf("sandbox: %+v, want the install directory .ci/mcp/node_modules read-only", st.Sandbox)
	}
	tools := c.Tools()
	names := map[string]mcp.Tool{}
	for _, tl := range tools {
		names[tl.Name] = tl
	}
	read, ok := names["mcp__fs__read_text_file"]
	if !ok || read.Tool != "read_text_file" || read.Mutating || len(read.SchemaHash) != 64 || !json.Valid(read.InputSchema) || !json.Valid(read.Raw) {
		t.Fatalf("read_text_file: %+v (tools %v)", read, tools)
	}
	if w := names["mcp__fs__write_file"]; w.Mutating {
		t.Errorf("write_file of a read-only server is mutating")
	}
	listed := all[*event.MCPToolsListed](e.rec)
	if len(listed) != 1 || len(listed[0].Tools) != len(tools) || listed[0].Size == 0 {
		t.Errorf("tools_listed: %+v", listed)
	}
	if got := e.rec.types(); !slices.Equal(got, []string{event.TypeMCPServerStarted, event.TypeMCPToolsListed}) {
		t.Errorf("recorded %v", got)
	}

	ctx := context.Background()
	r, err := c.CallTool(ctx, "call-1", "read_text_file", json.RawMessage(`{"path":"`+filepath.Join(e.ws, "a.txt")+`"}`))
	if err != nil || r.IsError || r.Text != "hello from the workspace\n" || !json.Valid(r.Raw) || r.Truncated {
		t.Errorf("read: %+v %v", r, err)
	}
	// The server would write (it allows the workspace); the kernel does not.
	target := filepath.Join(e.ws, "new.txt")
	r, err = c.CallTool(ctx, "call-2", "write_file", json.RawMessage(`{"path":"`+target+`","content":"x"}`))
	if err != nil || !r.IsError || !strings.Contains(r.Text, "EACCES") {
		t.Errorf("write in a read-only workspace: %+v %v", r, err)
	}
	if _, err := os.Stat(target); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the write happened: %v", err)
	}
	// Outside the workspace the server itself refuses.
	r, err = c.CallTool(ctx, "call-3", "read_text_file", json.RawMessage(`{"path":"/etc/passwd"}`))
	if err != nil || !r.IsError {
		t.Errorf("read outside: %+v %v", r, err)
	}
	if _, err := c.CallTool(ctx, "call-4", "no_such_tool", nil); !errors.Is(err, mcp.ErrUnknownTool) {
		t.Errorf("unknown tool: %v", err)
	}
	if _, err := c.CallTool(ctx, "call-5", "read_text_file", json.RawMessage(`[1]`)); !errors.Is(err, mcp.ErrBadArguments) {
		t.Errorf("array arguments: %v", err)
	}
	if raw, err := c.Forward(ctx, "ping", nil); err != nil || !json.Valid(raw) {
		t.Errorf("ping: %s %v", raw, err)
	}
	if _, err := c.Forward(ctx, "tools/call", nil); !errors.Is(err, mcp.ErrMethodRefused) {
		t.Errorf("forward tools/call: %v", err)
	}

	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.Done():
	case <-time.After(time.Second):
		t.Fatal("Done not closed after Close")
	}
	if ex := c.Exit(); ex.Reason != "stopped" || ex.Server != "fs" || ex.PID != st.PID {
		t.Errorf("exit: %+v", ex)
	}
	if _, err := c.CallTool(ctx, "call-6", "read_text_file", nil); !errors.Is(err, mcp.ErrNotRunning) {
		t.Errorf("call after close: %v", err)
	}
}

// TestConn_FilesystemWritable: a writable server writes in the
// workspace, and its tools are mutating.
func TestConn_FilesystemWritable(t *testing.T) {
	fs := mcptest.Program(t, mcptest.Filesystem)
	e := newEnv(t)
	c := e.start(t, mcp.Spec{Name: "fs", Argv: []string{fs, e.ws}, Writable: true})
	for _, tl := range c.Tools() {
		if !tl.Mutating {
			t.Errorf("%s of a writable server is not mutating (readOnlyHint %v)", tl.Name, tl.ReadOnlyHint)
		}
	}
	target := filepath.Join(e.ws, "new.txt")
	r, err := c.CallTool(context.Background(), "call-1", "write_file", json.RawMessage(`{"path":"`+target+`","content":"written"}`))
	if err != nil || r.IsError {
		t.Fatalf("write: %+v %v", r, err)
	}
	if b, err := os.ReadFile(target); err != nil || string(b) != "written" {
		t.Errorf("file: %q %v", b, err)
	}
}

// TestConn_InitializeAndListing: the initialize result is kept as
// received, and the recorded listing rebuilds the very tools offered.
func TestConn_InitializeAndListing(t *testing.T) {
	fs := mcptest.Program(t, mcptest.Filesystem)
	e := newEnv(t)
	c := e.start(t, mcp.Spec{Name: "fs", Argv: []string{fs, e.ws}})
	var init struct {
		ProtocolVersion string `json:"protocolVersion"`
		ServerInfo      struct {
			Name string `json:"name"`
		} `json:"serverInfo"`
		Capabilities map[string]json.RawMessage `json:"capabilities"`
	}
	if err := json.Unmarshal(c.InitializeResult(), &init); err != nil || init.ServerInfo.Name != "secure-filesystem-server" ||
		init.ProtocolVersion != c.Started().ProtocolVersion || init.Capabilities["tools"] == nil {
		t.Errorf("initialize result %s: %+v %v", c.InitializeResult(), init, err)
	}
	listed := all[*event.MCPToolsListed](e.rec)[0]
	listing := []byte(listed.Listing)
	if listed.ListingBlob != "" {
		listing = e.rec.ps[1].blobs[0]
	}
	tools, refused, err := mcp.ToolsFromListing("fs", false, listing)
	if err != nil || len(refused) != 0 {
		t.Fatalf("from listing: %v %v", refused, err)
	}
	got := c.Tools()
	if len(tools) != len(got) {
		t.Fatalf("%d tools from the listing, %d offered", len(tools), len(got))
	}
	for i := range tools {
		a, b := tools[i], got[i]
		if a.MCPTool != b.MCPTool || a.Description != b.Description || string(a.InputSchema) != string(b.InputSchema) || string(a.Raw) != string(b.Raw) {
			t.Errorf("tool %d: %+v from the listing, %+v offered", i, a, b)
		}
	}
}
