package engine

import (
	"context"
	"testing"

	"github.com/opx-dev/opx/engine/config"
	"github.com/opx-dev/opx/engine/executor"
)

type oneTool struct{ name string }

func (o oneTool) Tools() []executor.ToolDef {
	return []executor.ToolDef{{Name: o.name, Group: "t", InputSchema: []byte(`{"type":"object"}`)}}
}

func (o oneTool) Execute(context.Context, executor.Call) executor.Result {
	return executor.Result{Content: o.name}
}

// TestPipeline_SessionTools_NoFallback: a session with tools of its own
// (an mcp-proxy session) reaches none of the engine's, whatever it names
// (review #4: a proxied client's call of a tool its upstream lacks ran on
// the engine's configured server of the same name).
func TestPipeline_SessionTools_NoFallback(t *testing.T) {
	engineTools, err := executor.NewRegistry(oneTool{"mcp__upstream__write_file"}, oneTool{"execute_command"})
	if err != nil {
		t.Fatal(err)
	}
	proxyTools, err := executor.NewRegistry(oneTool{"mcp__upstream__echo"})
	if err != nil {
		t.Fatal(err)
	}
	emptyRegistry, err := executor.NewRegistry()
	if err != nil {
		t.Fatal(err)
	}
	p := &Pipeline{Tools: engineTools, SessionTools: func(s string) *executor.Registry {
		switch s {
		case "proxy":
			return proxyTools
		case "starting":
			return emptyRegistry
		}
		return nil
	}}
	for _, c := range []struct {
		session, tool string
		known         bool
	}{
		{"proxy", "mcp__upstream__echo", true},
		{"proxy", "mcp__upstream__write_file", false},
		{"proxy", "execute_command", false},
		{"starting", "execute_command", false},
		{"agent", "execute_command", true},
		{"agent", "mcp__upstream__echo", false},
	} {
		if _, ok := p.toolsFor(c.session).Def(c.tool); ok != c.known {
			t.Errorf("session %s, tool %s: known %v, want %v", c.session, c.tool, ok, c.known)
		}
	}
}

// TestConfig_UpstreamReserved: no configured server may be named as the
// upstream of `opx mcp-proxy -- COMMAND`.
func TestConfig_UpstreamReserved(t *testing.T) {
	if _, err := config.Parse([]byte("mcp:\n  servers:\n    upstream:\n      command: x\n")); err == nil {
		t.Fatal("a server named upstream was accepted")
	}
}
