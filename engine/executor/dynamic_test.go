package executor_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/opx-dev/opx/engine/executor"
)

// changing is a dynamic source whose tools a test changes.
type changing struct {
	mu   sync.Mutex
	defs []executor.ToolDef
}

func (c *changing) set(names ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.defs = nil
	for _, n := range names {
		c.defs = append(c.defs, executor.ToolDef{Name: n, Group: "mcp:" + strings.Split(n, "__")[1], InputSchema: []byte(`{"type":"object"}`)})
	}
}

func (c *changing) Tools() []executor.ToolDef {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.defs)
}

func (c *changing) Def(name string) (executor.ToolDef, bool) {
	for _, d := range c.Tools() {
		if d.Name == name {
			return d, true
		}
	}
	return executor.ToolDef{}, false
}

func (c *changing) Execute(_ context.Context, call executor.Call) executor.Result {
	return executor.Result{Content: "ran " + call.Tool}
}

func TestRegistry_AddDynamic_ToolsComeAndGo(t *testing.T) {
	r, err := executor.NewRegistry(executor.NewMemory(nil))
	must(t, err)
	src := &changing{}
	must(t, r.AddDynamic("mcp__", src))
	if _, ok := r.Def("mcp__fs__read"); ok {
		t.Fatal("a tool the source does not offer is defined")
	}
	src.set("mcp__fs__read", "mcp__fs__write", "mcp__web__fetch")
	if d, ok := r.Def("mcp__fs__read"); !ok || d.Group != "mcp:fs" {
		t.Fatalf("Def = %+v, %v", d, ok)
	}
	if g := r.Groups(); !slices.Contains(g, "mcp:fs") || !slices.Contains(g, "mcp:web") || !slices.Contains(g, "memory") {
		t.Fatalf("groups %v", g)
	}
	defs, unknown := r.Group("mcp:fs")
	if len(defs) != 2 || defs[0].Name != "mcp__fs__read" || len(unknown) != 0 {
		t.Fatalf("Group(mcp:fs) = %v, %v", defs, unknown)
	}
	if res := r.Execute(context.Background(), executor.Call{Tool: "mcp__web__fetch"}); res.IsError || res.Content != "ran mcp__web__fetch" {
		t.Fatalf("Execute = %+v", res)
	}
	// The server restarted with fewer tools: the gone one is unknown.
	src.set("mcp__fs__read")
	if _, ok := r.Def("mcp__web__fetch"); ok {
		t.Fatal("a tool the source stopped offering is still defined")
	}
	if res := r.Execute(context.Background(), executor.Call{Tool: "mcp__web__fetch"}); !res.IsError {
		t.Fatalf("a gone tool ran: %+v", res)
	}
	if _, unknown := r.Group("mcp:web"); len(unknown) != 1 {
		t.Fatalf("the gone group is still known")
	}
}

func TestRegistry_AddDynamic_PrefixIsTheSourcesAlone(t *testing.T) {
	r, err := executor.NewRegistry(executor.NewMemory(nil))
	must(t, err)
	if err := r.AddDynamic("memory_", &changing{}); err == nil {
		t.Fatal("a prefix the static tools use was accepted")
	}
	if err := r.AddDynamic("", &changing{}); err == nil {
		t.Fatal("an empty prefix was accepted")
	}
	must(t, r.AddDynamic("mcp__", &changing{}))
	if err := r.AddDynamic("mcp_", &changing{}); err == nil {
		t.Fatal("an overlapping prefix was accepted")
	}
	// A source that offers a name outside its prefix does not define it.
	src := &changing{}
	r2, _ := executor.NewRegistry()
	must(t, r2.AddDynamic("mcp__", src))
	src.defs = []executor.ToolDef{{Name: "read_file", Group: "files"}}
	if _, ok := r2.Def("read_file"); ok {
		t.Fatal("a dynamic source defined a name outside its prefix")
	}
	if g := r2.Groups(); len(g) != 0 {
		t.Fatalf("groups %v", g)
	}
}
