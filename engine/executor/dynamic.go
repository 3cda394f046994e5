package executor

import (
	"fmt"
	"strings"
)

// Dynamic is an executor whose tools come and go while the engine runs
// (an MCP server's: it restarts, or says its tools changed). The registry
// asks it at every lookup instead of copying its tools once, so the
// agent is offered, Shield judges and the pipeline runs what the source
// offers at that moment. Its methods must be safe for concurrent use.
type Dynamic interface {
	Executor
	// Def returns the definition of one of its tools as of now.
	Def(name string) (ToolDef, bool)
}

// dynamic is a Dynamic source and the name prefix its tools carry.
type dynamic struct {
	prefix string
	src    Dynamic
}

// AddDynamic adds a source of tools named with prefix (e.g. "mcp__"): a
// name with that prefix is the source's alone, whatever it offers, and
// the static tools may not use it. It must be called before the registry
// is used.
func (r *Registry) AddDynamic(prefix string, src Dynamic) error {
	if prefix == "" {
		return fmt.Errorf("a dynamic tool source needs a name prefix")
	}
	for name := range r.defs {
		if strings.HasPrefix(name, prefix) {
			return fmt.Errorf("tool %q is defined with the prefix %q of a dynamic source", name, prefix)
		}
	}
	for _, dy := range r.dyn {
		if strings.HasPrefix(dy.prefix, prefix) || strings.HasPrefix(prefix, dy.prefix) {
			return fmt.Errorf("dynamic tool prefixes %q and %q overlap", dy.prefix, prefix)
		}
	}
	r.dyn = append(r.dyn, dynamic{prefix: prefix, src: src})
	return nil
}

// dynamicFor is the dynamic source whose prefix name has, or nil.
func (r *Registry) dynamicFor(name string) *dynamic {
	for i := range r.dyn {
		if strings.HasPrefix(name, r.dyn[i].prefix) {
			return &r.dyn[i]
		}
	}
	return nil
}
