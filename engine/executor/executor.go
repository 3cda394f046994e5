package executor

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"
)

// ToolDef describes a tool to the model and to the engine.
type ToolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
	Group       string          `json:"group"`
	// Mutating tools change the workspace: Chronicle snapshots what
	// they will touch before they run.
	Mutating bool `json:"mutating"`
	// WorkspaceWide tools (shell commands, git commit) may change any
	// path in the workspace, so they cannot name what they touch:
	// Chronicle takes an incremental snapshot of the whole workspace
	// before they run and records the difference after. Only mutating
	// tools are workspace-wide.
	WorkspaceWide bool `json:"workspace_wide,omitempty"`
	// ReadOnlyHint says the tool's author declares that it only reads
	// (an MCP server's readOnlyHint, as its listing says): Shield judges
	// the paths its arguments name as reads, so its reasons say what the
	// call claims to do. It is never trusted for more: a mutating tool
	// with the hint is still snapshotted first, as a server that lies
	// may write anyway, and what it reads is judged as any read (a
	// credential is still refused).
	ReadOnlyHint bool `json:"-"`
	// UntrustedResult says the tool's result comes from a program opx
	// does not control (an MCP server): Shield reads it for instructions
	// aimed at the agent before the model sees it.
	UntrustedResult bool `json:"-"`
}

// MaxWriteBytes caps what write_file and edit_file may write.
const MaxWriteBytes = 8 << 20

// Toucher is implemented by executors that change the workspace: Touches
// names the workspace-relative paths a call will change, so their state
// can be recorded before it runs.
type Toucher interface {
	Touches(c Call) ([]string, error)
}

// Pather is implemented by executors whose tools act on workspace paths
// their arguments do not name (the memory tools on MEMORY.md), so that
// Shield judges those paths too.
type Pather interface {
	Paths(c Call) []string
}

// Call is one allowed tool call.
type Call struct {
	ID   string
	Tool string
	Args json.RawMessage
	// Links maps a path argument, as written, to the path it resolved to
	// beneath the workspace when Shield judged the call (Workspace.Resolve),
	// for the paths that went through a symlink. Executors open what
	// Judged returns following no symlink, so what they open is what
	// Shield judged.
	Links map[string]string
}

// Judged is the path the call's argument rel was judged as: its
// resolution when it went through a symlink, else rel itself. A
// resolution that left the workspace gives rel back (opening it, with no
// symlink followed, fails).
func (c Call) Judged(rel string) string {
	if r, ok := c.Links[rel]; ok && r != "" && !path.IsAbs(r) {
		return r
	}
	return rel
}

// Result is what a tool call produced, for the model and the ledger.
type Result struct {
	Content string `json:"content"`
	IsError bool   `json:"is_error"`
	// Truncated says Content was cut at the output cap.
	Truncated bool `json:"truncated,omitempty"`
	// ExitCode is a process's exit status (shell commands, git); 0 for
	// tools that run no process and for a command that could not be
	// started. A command killed by a signal or its timeout reports -1.
	// An error result with ExitCode 0 is a failure of the tool itself;
	// with another, the process ran and that is how it ended.
	ExitCode int `json:"exit_code,omitempty"`
}

// Errorf builds an error result.
func Errorf(format string, args ...any) Result {
	return Result{Content: fmt.Sprintf(format, args...), IsError: true}
}

// Executor runs the tools it defines.
type Executor interface {
	Tools() []ToolDef
	Execute(ctx context.Context, c Call) Result
}

// Registry maps tool names to executors: the static ones given to
// NewRegistry, and the dynamic ones added with AddDynamic, whose tools
// are asked for at each lookup.
type Registry struct {
	defs  map[string]ToolDef
	execs map[string]Executor
	dyn   []dynamic
}

// NewRegistry registers executors; a tool name defined twice is an error.
func NewRegistry(execs ...Executor) (*Registry, error) {
	r := &Registry{defs: map[string]ToolDef{}, execs: map[string]Executor{}}
	for _, e := range execs {
		for _, d := range e.Tools() {
			if _, dup := r.defs[d.Name]; dup {
				return nil, fmt.Errorf("tool %q defined twice", d.Name)
			}
			r.defs[d.Name], r.execs[d.Name] = d, e
		}
	}
	return r, nil
}

// Def returns a tool's definition.
func (r *Registry) Def(name string) (ToolDef, bool) {
	if d, ok := r.defs[name]; ok {
		return d, true
	}
	if dy := r.dynamicFor(name); dy != nil {
		return dy.src.Def(name)
	}
	return ToolDef{}, false
}

// executor is the executor of a tool, static or dynamic (nil if none).
func (r *Registry) executor(name string) Executor {
	if e, ok := r.execs[name]; ok {
		return e
	}
	if dy := r.dynamicFor(name); dy != nil {
		if _, ok := dy.src.Def(name); ok {
			return dy.src
		}
	}
	return nil
}

// Touches names the paths a call will change, for tools whose executor
// can say (Toucher); ok is false for tools that cannot.
func (r *Registry) Touches(c Call) (paths []string, ok bool, err error) {
	t, isToucher := r.executor(c.Tool).(Toucher)
	if !isToucher {
		return nil, false, nil
	}
	paths, err = t.Touches(c)
	return paths, true, err
}

// Paths names the workspace paths a call acts on beyond those in its
// arguments (Pather), or nil.
func (r *Registry) Paths(c Call) []string {
	if p, ok := r.executor(c.Tool).(Pather); ok {
		return p.Paths(c)
	}
	return nil
}

// Execute runs an allowed call. Unknown tools are an error result.
func (r *Registry) Execute(ctx context.Context, c Call) Result {
	e := r.executor(c.Tool)
	if e == nil {
		return Errorf("unknown tool %q", c.Tool)
	}
	return e.Execute(ctx, c)
}

// all returns every definition: the static ones and the dynamic ones as
// of now.
func (r *Registry) all() []ToolDef {
	out := make([]ToolDef, 0, len(r.defs))
	for _, d := range r.defs {
		out = append(out, d)
	}
	for _, dy := range r.dyn {
		for _, d := range dy.src.Tools() {
			if strings.HasPrefix(d.Name, dy.prefix) {
				out = append(out, d)
			}
		}
	}
	return out
}

// Groups returns the group names, sorted.
func (r *Registry) Groups() []string {
	seen := map[string]bool{}
	var out []string
	for _, d := range r.all() {
		if !seen[d.Group] {
			seen[d.Group] = true
			out = append(out, d.Group)
		}
	}
	sort.Strings(out)
	return out
}

// Group returns the definitions of the named groups, sorted by name, and
// the names it does not know.
func (r *Registry) Group(names ...string) (defs []ToolDef, unknown []string) {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	known := map[string]bool{}
	for _, d := range r.all() {
		if want[d.Group] {
			defs = append(defs, d)
			known[d.Group] = true
		}
	}
	for _, n := range names {
		if !known[n] {
			unknown = append(unknown, n)
		}
	}
	sort.Slice(defs, func(i, j int) bool { return defs[i].Name < defs[j].Name })
	return defs, unknown
}

// decodeArgs decodes a call's JSON arguments strictly.
func decodeArgs(raw json.RawMessage, v any) error {
	if len(raw) == 0 {
		raw = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("invalid arguments: %v", err)
	}
	return nil
}
