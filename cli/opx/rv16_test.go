package main_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opx-dev/opx/internal/mcptest"
)

// Issue 16 review: failing tests that prove findings.

// TestRV16_ProxyCallRunsOnAnotherServer: a session of `opx mcp-proxy --
// COMMAND` names its upstream "upstream", which is also a valid name for
// a configured server. When the client calls a tool its own upstream does
// not offer, Pipeline.toolsFor falls back to the engine's registry, and
// the engine's configured server "upstream" (here the filesystem server,
// writable) runs the call: the client of one server reaches another, one
// the session's mcp.client entry does not name.
func TestRV16_ProxyCallRunsOnAnotherServer(t *testing.T) {
	fs := mcptest.Program(t, mcptest.Filesystem)
	every := mcptest.Program(t, mcptest.Everything)
	w := proxyWorld(t, fmt.Sprintf("    upstream:\n      command: %s\n      args: [\"${workspace}\"]\n      writable: true\n", fs))
	if err := os.WriteFile(filepath.Join(w.ws, ".opx/policy.yaml"), []byte("version: 1\ndefault: allow\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := w.connectProxy("rv16-client", nil, "--", every)
	tools := map[string]bool{}
	lt, err := p.cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range lt.Tools {
		tools[tl.Name] = true
	}
	if tools["write_file"] || !tools["echo"] {
		t.Fatalf("the session's upstream is not the everything server: %v", tools)
	}
	waitFor(t, "the configured server upstream running", func() bool {
		out, _, _ := w.run("status")
		return strings.Contains(out, "upstream (writable) running")
	})
	res, text := p.call(t, "write_file", map[string]any{"path": "written-through-proxy.txt", "content": "x"})
	t.Logf("answer: %q %v", text, res.IsError)
	if _, err := os.Stat(filepath.Join(w.ws, "written-through-proxy.txt")); err == nil || (!res.IsError && strings.Contains(text, "Successfully")) {
		t.Errorf("a tool the session's upstream does not offer ran on the engine's configured server \"upstream\": %q (isError %v)", text, res.IsError)
	}
}
