package mcpproxy

import (
	"testing"

	"github.com/opx-dev/opx/engine/executor"
)

// TestProxySessions_ToolsAfterEnd: a proxy session has no tools before
// its upstream starts and none after its end (a call still on its way
// must not fall back to the engine's registry); an agent session has no
// registry of its own.
func TestProxySessions_ToolsAfterEnd(t *testing.T) {
	reg, err := executor.NewRegistry(executor.NewMemory(nil))
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
