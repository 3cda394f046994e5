package mcpproxy

import (
	"context"
	"testing"

	"github.com/opx-dev/opx/engine/executor"
)

type oneTool struct{ name string }

func (o oneTool) Tools() []executor.ToolDef {
	return []executor.ToolDef{{Name: o.name, Group: "t", InputSchema: []byte(`{"type":"object"}`)}}
}

func (o oneTool) Execute(context.Context, executor.Call) executor.Result {
	return executor.Result{Content: o.name}
}

// TestProxySessions_ToolsAfterEnd: a proxy session has no tools before
// its upstream starts and none after its end (a call still on its way
// must not fall back to the engine's registry); an agent session has no
// registry of its own.
func TestProxySessions_ToolsAfterEnd(t *testing.T) {
	reg, err := executor.NewRegistry(oneTool{"mcp__fs__read_file"})
	if err != nil {
		t.Fatal(err)
	}
	p := newProxySessions()
	p.byID["starting"] = &proxySession{}
	p.byID["open"] = &proxySession{reg: reg}
	if p.Tools("starting") != emptyRegistry || p.Tools("open") != reg || p.Tools("agent") != nil {
		t.Fatal("tools of open sessions")
	}
	p.drop("open")
	if got := p.Tools("open"); got != emptyRegistry {
		t.Errorf("an ended proxy session's tools: %v, want none (never the engine's)", got)
	}
}
